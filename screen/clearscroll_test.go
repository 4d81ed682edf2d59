package screen

import (
	"fmt"
	"testing"
)

// With ClearToScrollback, ED 2 keeps the erased rows, down to the last
// one in use, in the scrollback (alacritty's clear, which interminai's
// xterm emulator has); without it, as in xterm.js, they are gone.
func TestClearToScrollback(t *testing.T) {
	scrollback := func(s *Screen) []string {
		var out []string
		for n := s.ScrollbackLen(); n >= 1; n-- {
			out = append(out, s.Line(-n, false))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		push   bool
		input  string
		want   []string
		cursor [2]int
	}{
		{"pushes the used rows", true, "one\r\ntwo\r\n\r\nfour\x1b[2J", []string{"one", "two", "", "four"}, [2]int{3, 4}},
		{"then ED 3 drops them", true, "one\r\ntwo\x1b[H\x1b[2J\x1b[3J", nil, [2]int{0, 0}},
		{"an empty screen pushes nothing", true, "\x1b[2J", nil, [2]int{0, 0}},
		{"a coloured blank counts as used", true, "\x1b[41m \x1b[m\x1b[2J", []string{""}, [2]int{0, 1}},
		{"not on the alternate screen", true, "main\x1b[?1049halt\x1b[2J", nil, [2]int{0, 7}},
		{"off by default", false, "one\r\ntwo\x1b[2J", nil, [2]int{1, 3}},
	} {
		s := New(20, 5, Options{Scrollback: 100, ClearToScrollback: tc.push})
		s.Write([]byte(tc.input))
		if got := scrollback(s); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("%s: scrollback %q, want %q", tc.name, got, tc.want)
		}
		for n := 1; n <= 5; n++ {
			if l := s.Line(n, false); l != "" {
				t.Errorf("%s: line %d is %q after the clear", tc.name, n, l)
			}
		}
		if r, c := s.Cursor(); [2]int{r, c} != tc.cursor {
			t.Errorf("%s: cursor %d,%d, want %v (a clear does not move it)", tc.name, r, c, tc.cursor)
		}
	}
}
