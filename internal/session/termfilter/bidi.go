package termfilter

import (
	"fmt"
	"strings"
	"unicode/utf16"
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

// IsInvisible reports the characters EscapeBidi escapes: the bidi controls,
// the Unicode tag characters U+E0000..U+E007F, which show as nothing yet
// spell out ASCII that a language model reads (instructions hidden in
// plain sight), and the line and paragraph separators U+2028 and U+2029,
// which some readers take as a line break the terminal never showed.
func IsInvisible(r rune) bool {
	return IsBidiControl(r) || r >= 0xe0000 && r <= 0xe007f || r == 0x2028 || r == 0x2029
}

// EscapeBidi shows each bidi control, tag character and line or paragraph
// separator in s (IsInvisible) as <U+202E> and the like, so that it is seen
// instead of acted on. (Emoji flags of regions, which are spelled with tag
// characters, show escaped too.)
func EscapeBidi(s string) string {
	if !strings.ContainsFunc(s, IsInvisible) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if IsInvisible(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EscapeBidiJSON writes each IsInvisible character in a JSON text as its
// \u escape (a surrogate pair for a tag character),
// which decodes to the same string: a program reading the JSON gets the
// text exactly, and a terminal showing it has nothing to reorder. JSON
// allows these characters only inside strings, so every one found is in
// a string.
func EscapeBidiJSON(js []byte) []byte {
	s := string(js)
	if !strings.ContainsFunc(s, IsInvisible) {
		return js
	}
	var b strings.Builder
	for _, r := range s {
		if IsInvisible(r) {
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}
