package cescape

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, ünïcode 字", "plain text, ünïcode 字"},
		{"\x1b]52;c;aGk=\x07", `\e]52;c;aGk=\a`},
		{"a\nb\r\tc", `a\nb\r\tc`},
		{`back\slash`, `back\\slash`},
		{"\x00\x01\x7f", `\x00\x01\x7f`},
		{"\u009b31m", `\xc2\x9b31m`},                   // C1 CSI
		{"ls \u202etxt.exe", `ls \xe2\x80\xaetxt.exe`}, // right-to-left override
		{"\u2066x\u2069", `\xe2\x81\xa6x\xe2\x81\xa9`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{"hi\U000e0041", `hi\xf3\xa0\x81\x81`}, // a tag character: invisible ASCII
		{"a\u2028b\u2029", `a\xe2\x80\xa8b\xe2\x80\xa9`},
		{"\x0b", `\v`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := EscapeControls(`{"args":["printf 'a\\n'\u001b"]}`+"\x1b[2J"), `{"args":["printf 'a\\n'\u001b"]}\e[2J`; got != want {
		t.Errorf("EscapeControls = %q, want %q", got, want)
	}
}

// Whatever goes in, the result holds no byte a terminal acts on, and
// Unescape gives back the original.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "\x1b[2J", "\\x41", "\\", "\u202e", "\xc2", "\xc2\x9b", "é\\e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if got, err := Unescape(e); err != nil || string(got) != s {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v (escaped %q)", s, got, err, e)
		}
		if !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, e)
		}
		for _, r := range e {
			if r < 0x20 || r == 0x7f || isHidden(r) {
				t.Fatalf("Escape(%q) = %q keeps %U", s, e, r)
			}
		}
		if !needsEscape(s, true) && e != s {
			t.Fatalf("Escape changed %q, which needs no escape, to %q", s, e)
		}
		c := EscapeControls(s)
		for _, r := range c {
			if r < 0x20 || r == 0x7f || isHidden(r) {
				t.Fatalf("EscapeControls(%q) = %q keeps %U", s, c, r)
			}
		}
		if !strings.Contains(s, `\`) && c != e {
			t.Fatalf("without a backslash, EscapeControls(%q) = %q differs from Escape's %q", s, c, e)
		}
	})
}

// EscapeLines keeps the newlines between lines and escapes the rest of
// each line as EscapeControls does; text with nothing to escape comes
// back as it is.
func TestEscapeLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"nothing to escape, \\ kept", "nothing to escape, \\ kept"},
		{"plain\nlines, \\ kept", "plain\nlines, \\ kept"},
		{"error: \x1b]0;title\x07\nnext \x1b]52;c;aGk=\x07 line", "error: \\e]0;title\\a\nnext \\e]52;c;aGk=\\a line"},
		{"tab\there\r\n", "tab\\there\\r\n"},
		{"\u202eevil\n", "\\xe2\\x80\\xaeevil\n"},
	} {
		if got := EscapeLines(c.in); got != c.want {
			t.Errorf("EscapeLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
