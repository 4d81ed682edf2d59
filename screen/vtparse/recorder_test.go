package vtparse

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// recorder writes every event as one line, and the bytes that would pass
// through a filter keeping everything.
type recorder struct {
	events []string
	text   strings.Builder // text of consecutive Print calls, merged
	out    []byte
}

func (r *recorder) flush() {
	if r.text.Len() > 0 {
		r.events = append(r.events, fmt.Sprintf("print %q", r.text.String()))
		r.text.Reset()
	}
}

func (r *recorder) Print(b []byte) {
	r.text.Write(b)
	r.out = append(r.out, b...)
}

func (r *recorder) PrintRune(c rune) {
	r.text.WriteRune(c)
	r.out = utf8.AppendRune(r.out, c)
}

func (r *recorder) Execute(c byte) {
	r.flush()
	r.events = append(r.events, fmt.Sprintf("exec %#x", c))
	r.out = append(r.out, c)
}

func (r *recorder) seq(kind string, s *Seq) {
	r.flush()
	e := fmt.Sprintf("%s %q priv=%q inter=%q params=%v sub=%v bad=%v raw=%q", kind, s.Final, s.Private, s.Inter, s.Params, s.Sub, s.Malformed, s.Raw)
	if kind == "osc" {
		e += fmt.Sprintf(" data=%q bel=%v", s.Data, s.BEL)
	}
	if s.Truncated {
		e += " truncated"
	}
	r.events = append(r.events, e)
	r.out = append(r.out, s.Raw...)
}

func (r *recorder) CSI(s *Seq)    { r.seq("csi", s) }
func (r *recorder) ESC(s *Seq)    { r.seq("esc", s) }
func (r *recorder) OSC(s *Seq)    { r.seq("osc", s) }
func (r *recorder) String(s *Seq) { r.seq("str", s) }

func (r *recorder) done() []string {
	r.flush()
	return r.events
}
