package mcpserver

import "strings"

// unescape expands the C-style escapes of `ptyplex input --text`: \n \r \t
// \b \a \v \f \e \E \\ and \xHH (one or two hex digits). Any other
// backslash sequence, and a trailing lone backslash, pass through
// unchanged, so `\z` stays `\z`. It mirrors the CLI's unescape (package
// main, so not importable); cmd/ptyplex/mcp_test.go checks that they agree.
func unescape(s string) []byte {
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
			for n < 2 && i+2+n < len(s) && hexDigit(s[i+2+n]) >= 0 {
				v = v*16 + hexDigit(s[i+2+n])
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

// hexDigit is the value of a hex digit, or -1.
func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Unescape is the exported form of unescape, for the test in cmd/ptyplex
// that keeps the MCP server and `ptyplex input --text` in agreement.
func Unescape(s string) []byte { return unescape(s) }
