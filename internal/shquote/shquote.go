// Package shquote spells a command line as a POSIX shell reads it back:
// one word per argument, quoted only where needed, for the COMMAND column
// of the listings that people read and copy (ptyplex list,
// ptyplex-sidecar --list). Characters a terminal would act on or that do
// not show (control characters, bidi controls, invalid UTF-8) are spelt
// as escapes in bash's and zsh's $'...', so that a listing never prints
// them.
package shquote

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Join quotes each argument and joins them with spaces.
func Join(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// safe are the characters a word needs no quotes for, wherever they are.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"

// Quote returns s as one shell word: as it is when it holds only safe
// characters, else in single quotes, or in $'...' when it holds
// characters that must not be printed as they are.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	if !hidden(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x80 && !strconv.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !strconv.IsPrint(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case !strconv.IsPrint(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// hidden reports whether s holds a character that must not be printed as
// it is.
func hidden(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || !strconv.IsPrint(r) {
			return true
		}
		i += n
	}
	return false
}
