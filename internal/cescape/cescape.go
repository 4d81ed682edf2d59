// Package cescape expands the C-style escapes that `ptyplex input --text`
// and the MCP input tool accept, so that both type exactly the same bytes.
package cescape

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Unescape expands the C-style escapes of `input --text`: \n \r \t \b \a
// \v \f \e \E \\ and \xHH. Any other backslash sequence, and a trailing
// lone backslash, pass through unchanged, so `\z` stays `\z`. As in
// interminai, \x takes the next two characters, which must be a hex
// byte: fewer is an "incomplete" error, others an "invalid" one.
func Unescape(s string) ([]byte, error) {
	if !strings.Contains(s, `\`) {
		return []byte(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		c := s[i+1]
		if v, ok := simpleEscapes[c]; ok {
			out = append(out, v)
			i++
			continue
		}
		if c == 'x' {
			v, n, err := hexEscape(s[i+2:])
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			i += 1 + n
			continue
		}
		out = append(out, '\\') // unknown escape: keep it as written
	}
	return out, nil
}

// hexEscape reads the two characters after `\x` at the start of s: the
// byte they spell and the length of s they take.
func hexEscape(s string) (byte, int, error) {
	_, n1 := utf8.DecodeRuneInString(s)
	_, n2 := utf8.DecodeRuneInString(s[n1:])
	if n1 == 0 || n2 == 0 {
		return 0, 0, errors.New(`incomplete \x escape`)
	}
	pair := s[:n1+n2]
	// Two hex digits, or a plus sign and one, as Rust's u8::from_str_radix
	// (interminai's parser) takes.
	hi, lo := pair[0], pair[len(pair)-1]
	switch {
	case len(pair) == 2 && isHex(hi) && isHex(lo):
		return byte(hexVal(hi)<<4 | hexVal(lo)), 2, nil
	case len(pair) == 2 && hi == '+' && isHex(lo):
		return byte(hexVal(lo)), 2, nil
	}
	return 0, 0, fmt.Errorf(`invalid hex escape: \x%s`, pair)
}

var simpleEscapes = map[byte]byte{
	'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'a': '\a',
	'v': '\v', 'f': '\f', 'e': 0x1b, 'E': 0x1b, '\\': '\\',
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}
