// Package cescape expands the C-style escapes that `ptyplex input --text`
// and the MCP input tool accept, so that both type exactly the same bytes.
package cescape

import "strings"

// Unescape expands the C-style escapes of `input --text`: \n \r \t \b \a
// \v \f \e \E \\ and \xHH (one or two hex digits). Any other backslash
// sequence, and a trailing lone backslash, pass through unchanged, so
// `\z` stays `\z`.
func Unescape(s string) []byte {
	if !strings.Contains(s, `\`) {
		return []byte(s)
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
			v, n := 0, 0
			for n < 2 && i+2+n < len(s) && isHex(s[i+2+n]) {
				v = v*16 + hexVal(s[i+2+n])
				n++
			}
			if n > 0 {
				out = append(out, byte(v))
				i += 1 + n
				continue
			}
		}
		out = append(out, '\\') // unknown escape: keep it as written
	}
	return out
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
