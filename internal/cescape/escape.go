package cescape

import (
	"strings"
	"unicode/utf8"
)

// Escape is the inverse of Unescape for showing untrusted text on a
// terminal: every byte that a terminal could act on comes out as a
// backslash escape Unescape reads back, so a string from a file (a
// recorded OPEN, a note) can be printed without its escape sequences
// reaching the reader's terminal. It escapes the C0 controls and DEL, the
// C1 controls (U+0080..U+009F, which some terminals take as CSI, OSC and
// so on), the bidirectional overrides and isolates (which reorder what
// follows on the line, making a command look like another), the tag
// characters U+E0000..U+E007F and the separators U+2028, U+2029, bytes that
// are not UTF-8, and the backslash itself. Everything else is kept, so
// ordinary text, non-ASCII included, reads as it is.
// Unescape(Escape(s)) == s for every s.
func Escape(s string) string { return escape(s, true) }

// EscapeControls is Escape for text that is already in a notation of its
// own, such as JSON, where a backslash is common and harmless: it escapes
// what Escape does except the backslash. The result is as safe to print,
// but a literal `\e` and an escaped ESC then read the same.
func EscapeControls(s string) string { return escape(s, false) }

func escape(s string, backslash bool) string {
	if !needsEscape(s, backslash) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			hexByte(&b, s[i])
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case r < 0x80 && shortEscape[r] != "":
			b.WriteString(shortEscape[r])
		case r < 0x20 || r == 0x7f:
			hexByte(&b, byte(r))
		case isHidden(r):
			// Unescape has no \u: spell out the UTF-8 bytes instead.
			for j := range n {
				hexByte(&b, s[i+j])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string, backslash bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || (r == '\\' && backslash) || r < 0x20 || r == 0x7f || isHidden(r) {
			return true
		}
		i += n
	}
	return false
}

// isHidden reports the non-ASCII runes that act on a terminal instead of
// showing: C1 controls, the bidi embeddings, overrides and isolates, the
// tag characters (invisible, yet a language model reads the ASCII they
// spell) and the line and paragraph separators.
func isHidden(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		(r >= 0xe0000 && r <= 0xe007f) || r == 0x2028 || r == 0x2029
}

// shortEscape is the readable form of the controls Unescape knows by
// letter. \a, \b, \v and \f are rarer than their hex forms are clear, but
// both read back the same.
var shortEscape = [0x80]string{
	'\n': `\n`, '\r': `\r`, '\t': `\t`, 0x1b: `\e`, '\a': `\a`, '\b': `\b`, '\v': `\v`, '\f': `\f`,
}

func hexByte(b *strings.Builder, c byte) {
	const digits = "0123456789abcdef"
	b.WriteString(`\x`)
	b.WriteByte(digits[c>>4])
	b.WriteByte(digits[c&15])
}

// EscapeLines is EscapeControls for text that is shown line by line, such
// as another program's stderr: each line is escaped, the newlines between
// them are kept.
func EscapeLines(s string) string {
	if !needsEscape(s, false) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = EscapeControls(l)
	}
	return strings.Join(lines, "\n")
}
