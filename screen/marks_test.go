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

// With a key required, only the marks that carry it count; the others
// (without a key, with another, with the key's prefix) are dropped.
func TestMarksRequireKey(t *testing.T) {
	s := New(20, 3, Options{})
	s.RequireMarkKey("k3y")
	s.Write([]byte("\x1b]133;A\x07\x1b]133;D;0;ptyplex=other\x07\x1b]133;B;ptyplex=k3\x07\x1b]133;C;ptyplex=k3yy\x07" +
		"\x1b]133;A;ptyplex=k3y\x07$ \x1b]133;D;5;ptyplex=k3y\x07\x1b]133;B;aid=1;ptyplex=k3y\x07"))
	want := []Mark{
		{Kind: 'A', Line: 0, Col: 0},
		{Kind: 'D', Line: 0, Col: 2, Status: 5, HasStatus: true},
		{Kind: 'B', Line: 0, Col: 2},
	}
	if got := s.Marks(); !slices.Equal(got, want) || s.MarksTotal() != 3 || s.ForgedMarks() != 4 {
		t.Fatalf("marks %+v (total %d, forged %d); want %+v, 3, 4", got, s.MarksTotal(), s.ForgedMarks(), want)
	}
}
