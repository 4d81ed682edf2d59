package cescape

import "testing"

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:          "plain",
		`a\nb`:           "a\nb",
		`\r\t\b\a\v\f`:   "\r\t\b\a\v\f",
		`\e[A\E[B`:       "\x1b[A\x1b[B",
		`back\\slash`:    `back\slash`,
		`\x41\x7e\x1B`:   "A~\x1b",
		`\z stays`:       `\z stays`,
		`trailing\`:      `trailing\`,
		`ihello\e:wq\r`:  "ihello\x1b:wq\r",
		`\\n is literal`: `\n is literal`,
		`\x+f`:           "\x0f",
		`ünï\x63ode\n`:   "ünïcode\n",
		``:               "",
	} {
		got, err := Unescape(in)
		if err != nil || string(got) != want {
			t.Errorf("Unescape(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// A \x not followed by two characters that spell a byte fails, with
// interminai's words, instead of typing something else.
func TestUnescapeRefusesBadHex(t *testing.T) {
	for in, want := range map[string]string{
		`\x`:       `incomplete \x escape`,
		`ab\x4`:    `incomplete \x escape`,
		`\x4g`:     `invalid hex escape: \x4g`,
		`\xZZ`:     `invalid hex escape: \xZZ`,
		`\x-1`:     `invalid hex escape: \x-1`,
		`\xé1 end`: `invalid hex escape: \xé1`,
	} {
		got, err := Unescape(in)
		if err == nil || err.Error() != want {
			t.Errorf("Unescape(%q) = %q, %v; want the error %q", in, got, err, want)
		}
	}
}
