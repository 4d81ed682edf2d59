package termfilter

import (
	"fmt"
	"strings"
)

// IsBidiControl reports the characters that reorder the text after them
// when a terminal or an editor applies the Unicode bidirectional
// algorithm: the embeddings and overrides U+202A..U+202E and the isolates
// U+2066..U+2069. Text that holds them can show one thing and be another
// (the "Trojan Source" trick). The marks U+200E, U+200F and U+061C are
// not among them: they only settle the direction of the characters next
// to them, and right-to-left text uses them routinely.
func IsBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// EscapeBidi shows each bidi control in s as <U+202E> and the like, so
// that it is seen instead of acted on.
func EscapeBidi(s string) string {
	if !strings.ContainsFunc(s, IsBidiControl) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if IsBidiControl(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EscapeBidiJSON writes each bidi control in a JSON text as its \u escape,
// which decodes to the same string: a program reading the JSON gets the
// text exactly, and a terminal showing it has nothing to reorder. JSON
// allows these characters only inside strings, so every one found is in
// a string.
func EscapeBidiJSON(js []byte) []byte {
	s := string(js)
	if !strings.ContainsFunc(s, IsBidiControl) {
		return js
	}
	var b strings.Builder
	for _, r := range s {
		if IsBidiControl(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}
