package screen_test

import (
	"testing"

	"github.com/ptyplex/ptyplex/screen"
)

// A wide character that does not fit before the margin wraps whole; the
// cell it leaves blank is written with the pen, all of it (alacritty and
// xterm.js both), not only the background an erase would keep.
func TestWrapPadTakesThePen(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		attrs    screen.Attr
		bg       int16
	}{
		{"inverse", "\x1b[7mabcdefghi中", screen.AttrInverse, -1},
		{"bold underline on red", "\x1b[1;4;41mabcdefghi中", screen.AttrBold | screen.AttrUnderline, 1},
		{"plain", "abcdefghi中", 0, -1},
		{"at a right margin", "\x1b[?69h\x1b[1;5s\x1b[7mabcd中", screen.AttrInverse, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := screen.New(10, 3, screen.Options{})
			s.Write([]byte(tc.in))
			_, right := s.Margins()
			pad := s.Cells(1, nil)[right]
			if pad.Text != "" || pad.Width != 1 {
				t.Fatalf("pad cell %+v, want a blank", pad)
			}
			if pad.Attrs != tc.attrs || pad.BG.Index != tc.bg {
				t.Errorf("pad cell attrs %b bg %d, want %b bg %d", pad.Attrs, pad.BG.Index, tc.attrs, tc.bg)
			}
			if got := s.Line(2, false); got != "中" {
				t.Errorf("line 2 = %q, want the wide character", got)
			}
		})
	}
	// Reflow still drops the pad when the rows join again.
	s := screen.New(10, 3, screen.Options{})
	s.Write([]byte("\x1b[7mabcdefghi中\x1b[m"))
	s.Resize(20, 3)
	if got := s.Line(1, false); got != "abcdefghi中" {
		t.Errorf("after widening: %q, want the pad gone", got)
	}
}

// A character written over one half of a wide character leaves the other
// half a blank in the wide character's colours and style, as alacritty
// (interminai's xterm mode) leaves it; an erase keeps only its background.
func TestOverwrittenHalfKeepsItsStyle(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		col      int // the orphaned half
	}{
		{"lead overwritten", "\x1b[4;41m中\x1b[0;1;44m\x1b[1;1Hx", 1},
		{"trail overwritten", "\x1b[4;41m中\x1b[0;1;44m\x1b[1;2Hx", 0},
		{"trail overwritten by a run", "\x1b[4;41m中\x1b[0m\x1b[1;2Hxyz", 0},
		{"lead overwritten by a wide character", "ab\x1b[4;41m中\x1b[0m\x1b[1;2H文", 3},
		{"trail overwritten with autowrap off", "\x1b[?7labcdefgh\x1b[4;41m中\x1b[0my", 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := screen.New(10, 2, screen.Options{})
			s.Write([]byte(tc.in))
			c := s.Cells(1, nil)[tc.col]
			if c.Text != "" || c.Width != 1 || c.Attrs != screen.AttrUnderline || c.BG.Index != 1 {
				t.Errorf("orphaned half %+v, want a blank underlined on red", c)
			}
		})
	}
	s := screen.New(10, 2, screen.Options{})
	s.Write([]byte("\x1b[4;41m中\x1b[0;44m\x1b[1;2H\x1b[X"))
	if c := s.Cells(1, nil)[0]; c.Attrs != 0 || c.BG.Index != 1 {
		t.Errorf("half left by ECH %+v, want a blank that keeps only its background", c)
	}
}
