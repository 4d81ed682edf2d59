package screen

import (
	"slices"
	"testing"
)

func TestMarks(t *testing.T) {
	s := New(20, 3, Options{})
	s.Write([]byte("\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x1b\\one\r\ntwo\r\nthree\r\n\x1b]133;D;2\x07\x1b]133;A;cl=m\x07$ "))
	want := []Mark{
		{Kind: 'A', Line: 0, Col: 0},
		{Kind: 'B', Line: 0, Col: 2},
		{Kind: 'C', Line: 1, Col: 0},
		{Kind: 'D', Line: 4, Col: 0, Status: 2, HasStatus: true},
		{Kind: 'A', Line: 4, Col: 0},
	}
	if got := s.Marks(); !slices.Equal(got, want) {
		t.Fatalf("marks:\n got %+v\nwant %+v", got, want)
	}
	// The last mark's line is on screen: the line it names holds the prompt.
	if off := s.ScrolledOff(); off != 2 || s.Line(4-off+1, false) != "$" {
		t.Errorf("scrolled off %d, line %q", off, s.Line(4-off+1, false))
	}
	// And the C mark's line (the first of the output) is in scrollback.
	if got := s.Line(1-s.ScrolledOff(), false); got != "one" {
		t.Errorf("scrollback line of C = %q", got)
	}
}

func TestMarksIgnoreOthers(t *testing.T) {
	s := New(20, 3, Options{})
	s.Write([]byte("\x1b]133;E\x07\x1b]133;AB\x07\x1b]133\x07\x1b]133;D\x07"))
	want := []Mark{{Kind: 'D'}}
	if got := s.Marks(); !slices.Equal(got, want) {
		t.Fatalf("marks %+v, want %+v", got, want)
	}
	if u, _ := s.Unhandled(); len(u) != 3 {
		t.Errorf("unhandled %v", u)
	}
}
