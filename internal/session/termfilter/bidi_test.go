package termfilter

import (
	"encoding/json"
	"testing"
)

func TestEscapeBidi(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                       "plain",
		"a\u202eb":                    "a<U+202E>b",
		"\u202a\u202b\u202c\u202d":    "<U+202A><U+202B><U+202C><U+202D>",
		"\u2066x\u2067y\u2068z\u2069": "<U+2066>x<U+2067>y<U+2068>z<U+2069>",
		"rtl \u200f mark \u200e":      "rtl \u200f mark \u200e",
		"עברית":                       "עברית",
		"hi\U000e0041\U000e007f":      "hi<U+E0041><U+E007F>",
		"a\u2028b\u2029c":             "a<U+2028>b<U+2029>c",
	} {
		if got := EscapeBidi(in); got != want {
			t.Errorf("EscapeBidi(%q) = %q, want %q", in, got, want)
		}
	}
}

// Tag characters go as surrogate pairs, which decode to the same rune.
func TestEscapeBidiJSONTags(t *testing.T) {
	in := "say \U000e0068\U000e0069 \u2028!"
	js := EscapeBidiJSON([]byte(`"` + in + `"`))
	if string(js) != `"say \udb40\udc68\udb40\udc69 \u2028!"` {
		t.Errorf("EscapeBidiJSON: %s", js)
	}
	var back string
	if err := json.Unmarshal(js, &back); err != nil || back != in {
		t.Errorf("decodes to %q (%v)", back, err)
	}
}

func TestEscapeBidiJSON(t *testing.T) {
	in := map[string]string{"screen": "access = \"user\u202e \u2066// admin\u2069\u2066\""}
	js, _ := json.Marshal(in)
	out := EscapeBidiJSON(js)
	if string(out) != `{"screen":"access = \"user\u202e \u2066// admin\u2069\u2066\""}` {
		t.Errorf("EscapeBidiJSON: %s", out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["screen"] != in["screen"] {
		t.Errorf("the escaped JSON decodes to %q (%v), want %q", back["screen"], err, in["screen"])
	}
}

// JSON without the characters comes back as it was, not copied.
func TestEscapeBidiJSONNothingToEscape(t *testing.T) {
	js := []byte(`{"screen":"plain text \u00e9 \u2014 and \\u202e spelled out"}`)
	out := EscapeBidiJSON(js)
	if &out[0] != &js[0] || len(out) != len(js) {
		t.Errorf("EscapeBidiJSON copied or changed JSON with nothing to escape: %s", out)
	}
}
