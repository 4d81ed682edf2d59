package screen

import (
	"testing"
	"unicode/utf8"
)

// plainWidth measures a rendered plain line in cells with the screen's
// own width rule: code point widths summed.
func plainWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// FuzzScreen feeds arbitrary bytes in pseudo-random chunks with random
// resizes and checks the invariants every caller relies on.
func FuzzScreen(f *testing.F) {
	f.Add([]byte("hello\x1b[31mworld\x1b[0m\r\n中文😀e\u0301"))
	f.Add([]byte("\x1b[2;4r\x1b[?6h\x1b[9;9H\x1bM\x1b[5@\x1b[3P\x1b[2L\x1b[4M\x1b[?1049h\x1b[6n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		// The first bytes choose the size; a tiny generator seeded by the
		// input picks chunk lengths and resizes, so failures replay.
		cols, rows := 1+int(data[0]%100), 1+int(data[1]%40)
		data = data[2:]
		if len(data) > 8192 {
			data = data[:8192] // longer inputs only slow minimisation down
		}
		s := New(cols, rows, Options{Scrollback: 50, Unhandled: 4})
		seed := uint32(len(data)) | 1
		next := func(n int) int {
			seed ^= seed << 13
			seed ^= seed >> 17
			seed ^= seed << 5
			return int(seed % uint32(n))
		}
		maxCols := cols
		for len(data) > 0 {
			n := 1 + next(64)
			if n > len(data) {
				n = len(data)
			}
			s.Write(data[:n])
			data = data[n:]
			if next(8) == 0 {
				checkInvariants(t, s, maxCols)
				c, r := 1+next(120), 1+next(40)
				s.Resize(c, r)
				maxCols = max(maxCols, c)
			}
			checkCursor(t, s)
		}
		checkInvariants(t, s, maxCols)
	})
}

// checkCursor is the cheap check run after every chunk.
func checkCursor(t *testing.T, s *Screen) {
	t.Helper()
	cols, rows := s.Size()
	row, col := s.Cursor()
	if row < 0 || row >= rows || col < 0 || col >= cols {
		t.Fatalf("cursor %d,%d outside %dx%d", row, col, cols, rows)
	}
	if s.ScrollbackLen() > s.ScrollbackCap() {
		t.Fatalf("scrollback %d above capacity %d", s.ScrollbackLen(), s.ScrollbackCap())
	}
}

// checkInvariants renders everything and checks widths and bounds.
func checkInvariants(t *testing.T, s *Screen, maxCols int) {
	t.Helper()
	checkCursor(t, s)
	_, rows := s.Size()
	cols, _ := s.Size()
	for n := 1; n <= rows; n++ {
		l := s.Line(n, false)
		if w := plainWidth(l); w > cols {
			t.Fatalf("line %d is %d cells wide, screen has %d: %q", n, w, cols, l)
		}
		if !utf8.ValidString(l) {
			t.Fatalf("line %d is not UTF-8: %q", n, l)
		}
		s.Line(n, true)
	}
	for n := -s.ScrollbackLen(); n < 0; n++ {
		if w := plainWidth(s.Line(n, false)); w > maxCols {
			t.Fatalf("scrollback line %d is %d cells wide", n, w)
		}
		s.Line(n, true)
	}
	if seqs, _ := s.Unhandled(); len(seqs) > 4 {
		t.Fatalf("unhandled ring holds %d > 4", len(seqs))
	}
	s.TakeReplies()
}
