package shquote

import (
	"os/exec"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"seq", "seq"},
		{"/usr/bin/a-b_c.d", "/usr/bin/a-b_c.d"},
		{"", "''"},
		{"seq 3; sleep 1000", "'seq 3; sleep 1000'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"*", "'*'"},
		{"~", "'~'"},
		{"a\x1b]0;title\ab", `$'a\e]0;title\x07b'`},
		{"x\ny\t'\\", `$'x\ny\t\'\\'`},
		{"A\u202eB", `$'A\u202eB'`},
		{"bad\xffbyte", `$'bad\xffbyte'`},
		{"café ok", "'café ok'"},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := Join([]string{"sh", "-c", "seq 3; sleep 1000"}); got != "sh -c 'seq 3; sleep 1000'" {
		t.Errorf("Join: %s", got)
	}
}

// bash reads every quoted word back as the argument it was.
func TestQuoteReadBackByBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is required by this test")
	}
	args := []string{"plain", "", "two words", "it's", "$HOME `x`", "a\x1b[2Jb", "x\ny\t'\\\"", "A\u202eB", "bad\xffbyte", "\x01\x7f", "\U0001F600 \u00e9", "\U000e0069"}
	script := `for a in ` + Join(args) + `; do printf '%s\0' "$a"; done`
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(args) {
		t.Fatalf("bash read %q, want %q", got, args)
	}
	for i := range args {
		if got[i] != args[i] {
			t.Errorf("bash read %q, want %q (quoted %s)", got[i], args[i], Quote(args[i]))
		}
	}
}
