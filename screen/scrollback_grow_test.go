package screen

import (
	"fmt"
	"testing"
)

// TestGrowScrollback: growing a full, wrapped ring keeps every line in
// order, and lines pushed after it are kept up to the new capacity.
func TestGrowScrollback(t *testing.T) {
	s := New(10, 2, Options{Scrollback: 5})
	for i := 1; i <= 8; i++ { // 8 lines and the cursor row below them on a 2-row screen: l1..l7 scroll off, l3..l7 kept
		s.Write([]byte(fmt.Sprintf("l%d\r\n", i)))
	}
	s.GrowScrollback(4) // smaller: nothing changes
	if s.ScrollbackCap() != 5 || s.ScrollbackLen() != 5 {
		t.Fatalf("cap %d len %d after a smaller grow", s.ScrollbackCap(), s.ScrollbackLen())
	}
	s.GrowScrollback(20)
	for i := 9; i <= 14; i++ {
		s.Write([]byte(fmt.Sprintf("l%d\r\n", i)))
	}
	if got := s.ScrollbackLen(); got != 11 {
		t.Fatalf("scrollback holds %d lines, want 11 (l3..l13)", got)
	}
	for i := 1; i <= 11; i++ { // -1 is the newest: l13
		if got, want := s.Line(-i, false), fmt.Sprintf("l%d", 14-i); got != want {
			t.Errorf("line %d = %q, want %q", -i, got, want)
		}
	}
}

// TestDropScrollback: the lines go, the screen stays as it was, and the
// ring fills again from empty.
func TestDropScrollback(t *testing.T) {
	s := New(10, 2, Options{Scrollback: 5})
	for i := 1; i <= 8; i++ {
		s.Write([]byte(fmt.Sprintf("l%d\r\n", i)))
	}
	s.DropScrollback()
	if n := s.ScrollbackLen(); n != 0 {
		t.Fatalf("%d lines kept", n)
	}
	if got := s.Line(1, false); got != "l8" {
		t.Fatalf("screen row 1 is %q after the drop", got)
	}
	s.Write([]byte("l9\r\nl10\r\n"))
	if n, top := s.ScrollbackLen(), s.Line(-2, false); n != 2 || top != "l8" {
		t.Fatalf("after two more lines: %d kept, oldest %q; want 2 from l8", n, top)
	}
}

// TestOnScrollbackFull: the hook runs before a push would drop the oldest
// line, so a caller that takes the lines out and empties the ring there
// sees every line once, in order, whatever scrolls at once (SU by a
// screenful, vertical tabs); without the hook the ring keeps its newest.
func TestOnScrollbackFull(t *testing.T) {
	s := New(10, 3, Options{Scrollback: 4})
	var taken []string
	calls := 0
	s.OnScrollbackFull(func() {
		calls++
		if s.ScrollbackLen() != s.ScrollbackCap() {
			t.Errorf("hook called with %d of %d lines", s.ScrollbackLen(), s.ScrollbackCap())
		}
		for n := s.ScrollbackLen(); n >= 1; n-- {
			taken = append(taken, s.Line(-n, false))
		}
		s.DropScrollback()
	})
	var want []string
	for i := 1; i <= 9; i++ {
		s.Write([]byte(fmt.Sprintf("\r\nl%d", i)))
	}
	// "" and l1..l6 scrolled off; l7, l8 and l9 are on the screen.
	want = append(want, "")
	for i := 1; i <= 6; i++ {
		want = append(want, fmt.Sprintf("l%d", i))
	}
	s.Write([]byte("\x1b[3S"))  // l8, l9 and the blank cursor row
	s.Write([]byte("a\v\vb\v")) // the cursor row's "a" goes up with its row
	want = append(want, "l7", "l8", "l9", "", "", "  a")
	for n := s.ScrollbackLen(); n >= 1; n-- {
		taken = append(taken, s.Line(-n, false))
	}
	if fmt.Sprint(taken) != fmt.Sprint(want) {
		t.Fatalf("lines taken %q, want %q", taken, want)
	}
	if calls != len(want)/4 {
		t.Errorf("hook called %d times, want %d", calls, len(want)/4)
	}
	s.OnScrollbackFull(nil)
	s.DropScrollback()
	s.Write([]byte("\x1b[H\x1b[2J0\r\n1\r\n2\r\n3\r\n4\r\n5\r\n6")) // 0..3 scroll off, 4..6 shown
	if n, oldest := s.ScrollbackLen(), s.Line(-4, false); n != 4 || oldest != "0" {
		t.Fatalf("without the hook: %d lines kept, oldest %q; want 4 from \"0\"", n, oldest)
	}
}
