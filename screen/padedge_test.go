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
