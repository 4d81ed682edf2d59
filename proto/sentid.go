package proto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// checkSentIDs reports a top-level "terminalId" whose string is not
// valid UTF-8 as the host wrote it: a byte that is no part of a UTF-8
// character, or a \u escape of half a surrogate pair. encoding/json
// decodes either as U+FFFD, so the id it yields is not the id sent: two
// ids a byte apart would name one terminal, and a host's frames for the
// id it sent would name none (INPUT carries its id as raw bytes) or
// another's. A body that is no JSON object is left to its parser.
func checkSentIDs(body []byte) error {
	if !mayHaveBadString(body) {
		return nil // the usual case, without a second parse of the body
	}
	keys, ok := topKeys(body)
	if !ok {
		return nil
	}
	for _, k := range keys {
		if k.name == "terminalId" {
			if err := checkJSONString(k.value); err != nil {
				return fmt.Errorf("terminal id is not valid UTF-8 (%v)", err)
			}
		}
	}
	return nil
}

// checkSentLaunch reports a "cmd", "cwd", "commandLine" or "args" string
// of an OPEN that is not valid UTF-8 as the host wrote it, as
// checkSentIDs does for the id: decoded, it would be another program,
// directory, command line or argument than the one sent (U+FFFD for the
// bytes), run without a word. The values of
// "env" are left as decoded: a host passes its own environment on, which
// may hold anything, and a variable with U+FFFD in it is no other
// program.
func checkSentLaunch(body []byte) error {
	if !mayHaveBadString(body) {
		return nil
	}
	keys, ok := topKeys(body)
	if !ok {
		return nil
	}
	for _, k := range keys {
		switch k.name {
		case "cmd", "cwd", "commandLine":
			if err := checkJSONString(k.value); err != nil {
				return fmt.Errorf("%s is not valid UTF-8 (%v)", k.name, err)
			}
		case "args":
			var args []json.RawMessage
			if json.Unmarshal(k.value, &args) != nil {
				continue // not an array of values: its parser says so
			}
			for i, a := range args {
				if err := checkJSONString(a); err != nil {
					return fmt.Errorf("args[%d] is not valid UTF-8 (%v)", i, err)
				}
			}
		}
	}
	return nil
}

// mayHaveBadString says whether body has anything checkJSONString could
// refuse: a byte outside ASCII, or the start of a surrogate's escape.
func mayHaveBadString(body []byte) bool {
	for i, c := range body {
		if c >= utf8.RuneSelf {
			return true
		}
		if c == '\\' && i+2 < len(body) && body[i+1] == 'u' && (body[i+2] == 'd' || body[i+2] == 'D') {
			return true
		}
	}
	return false
}

// checkJSONString checks the raw JSON value v, when it is a string, for
// what encoding/json would replace with U+FFFD. Its error says what it
// found, for an ERROR to quote.
func checkJSONString(v []byte) error {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil // not a string: its parser says what it is instead
	}
	s := v[1 : len(v)-1]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+5 < len(s) && s[i+1] == 'u':
			r := hex4(s[i+2 : i+6])
			if !utf16.IsSurrogate(r) {
				i += 6
				continue
			}
			if r < 0xdc00 && i+11 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if lo := hex4(s[i+8 : i+12]); lo >= 0xdc00 && lo <= 0xdfff {
					i += 12
					continue
				}
			}
			return fmt.Errorf("the escape %s is half of a surrogate pair", s[i:i+6])
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				return fmt.Errorf("byte 0x%02x at offset %d of its JSON string", c, i)
			}
			i += n
		}
	}
	return nil
}

// hex4 reads four hex digits; -1 when they are not.
func hex4(b []byte) rune {
	n, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}
