package termfilter

import (
	"testing"

	"github.com/ptyplex/ptyplex/screen/vtparse"
)

// FuzzFilter: whatever goes in, what comes out holds nothing the filter
// promises to drop, as the same parser reads it again.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		mixedStream,
		"\x1b]52;c;aGk=\x07\x1b]2;t\x1b\\\x1bP$qm\x1b\\\x1b[21t\x1b[c\x1b[>c\x1b[6n\x1b[?2004$p",
		"\x1b]8;;u\x1b[31m", "\x1b]2;x\x1b[0m", "\xc2\x9b6n", "\x1b[?1049;1001h",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := New(Options{}).Append(nil, in)
		var p vtparse.Parser
		p.MaxRaw, p.MaxOSC = DefaultMaxString+8, DefaultMaxString+1
		c := &checker{t: t}
		// An ESC \ at the end completes a string the output ends in, so
		// that the checker sees it.
		p.Parse(append(out, 0x1b, '\\'), c)
	})
}

// checker fails on anything the filter drops with its default options.
type checker struct{ t *testing.T }

func (c *checker) Print([]byte) {}
func (c *checker) PrintRune(r rune) {
	if r >= 0x80 && r <= 0x9f {
		c.t.Errorf("a C1 control passed: %U", r)
	}
}
func (c *checker) Execute(b byte) {
	if c0Kept&(1<<b) == 0 {
		c.t.Errorf("the control %#x passed", b)
	}
}
func (c *checker) ESC(s *vtparse.Seq) {
	if s.Final == 'Z' && len(s.Inter) == 0 {
		c.t.Errorf("DECID passed: %q", s.Raw)
	}
}
func (c *checker) CSI(s *vtparse.Seq) {
	if s.Malformed {
		c.t.Errorf("a malformed CSI passed: %q", s.Raw)
	}
	switch {
	case s.Final == 'c', s.Final == 'n', s.Final == 'x', s.Final == 'i', s.Final == 'q' && len(s.Inter) == 0,
		len(s.Inter) == 1 && s.Inter[0] == '$':
		c.t.Errorf("a report request passed: %q", s.Raw)
	case s.Final == 't' && s.Param(0, 0) != 22 && s.Param(0, 0) != 23:
		c.t.Errorf("a window operation passed: %q", s.Raw)
	}
}
func (c *checker) OSC(s *vtparse.Seq) {
	if n, _, _ := oscNumber(s.Data); n != 8 && n != 133 {
		c.t.Errorf("an OSC passed: %q", s.Raw)
	}
}
func (c *checker) String(s *vtparse.Seq) {
	c.t.Errorf("a string passed: %q", s.Raw)
}
