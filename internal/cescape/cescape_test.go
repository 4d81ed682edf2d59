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
		`\x4`:            "\x04",
		`\xZZ`:           `\xZZ`,
		`\z stays`:       `\z stays`,
		`trailing\`:      `trailing\`,
		`ihello\e:wq\r`:  "ihello\x1b:wq\r",
		`\\n is literal`: `\n is literal`,
		`\x`:             `\x`,
		`ünï\x63ode\n`:   "ünïcode\n",
		``:               "",
	} {
		if got := string(Unescape(in)); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
