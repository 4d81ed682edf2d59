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
