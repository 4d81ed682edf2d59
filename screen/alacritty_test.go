package screen

import (
	"strings"
	"testing"
)

// Where xterm.js and alacritty (the emulator of interminai's xterm mode,
// alacritty_terminal 0.25) disagree, the screen follows alacritty. These
// cases are where both, or alacritty alone, differ from what the screen
// did before.

// TestECHWithWrapPending: ECH erases from the cursor's column, the last
// one, even with a wrap pending (alacritty's erase_chars starts at
// cursor.point.column; interminai's own emulator, xterm and xterm.js
// erase it too), and the wrap stays pending as in alacritty.
func TestECHWithWrapPending(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "ECH", cols: 20, rows: 4, in: "abcdefghijklmnopqrst\x1b[XA",
			lines: []string{"abcdefghijklmnopqrs", "A"}, row: 1, col: 1},
		{name: "ECH 5", cols: 20, rows: 4, in: "abcdefghijklmnopqrst\x1b[5X",
			lines: []string{"abcdefghijklmnopqrs"}, row: 0, col: 19},
		{name: "ECH on a wide character", cols: 20, rows: 4, in: "abcdefghijklmnopqr中\x1b[X",
			lines: []string{"abcdefghijklmnopqr"}, row: 0, col: 19},
		// EL 0 keeps the character (xterm.js, tmux; alacritty erases nothing).
		{name: "EL 0", cols: 20, rows: 4, in: "abcdefghijklmnopqrst\x1b[K",
			lines: []string{"abcdefghijklmnopqrst"}, row: 0, col: 19},
	})
}

// TestNoAutowrapLeavesWrapPending: with DECAWM off, writing the last
// column still leaves a wrap pending (alacritty's input sets
// input_needs_wrap whatever LINE_WRAP is, and its wrapline does nothing
// until ?7h; xterm.js the same): further characters go over the last
// column, the one after a ?7h starts the next row, and anything attaching
// to "the character before the cursor" finds the one in the last column.
func TestNoAutowrapLeavesWrapPending(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "ASCII then ?7h", cols: 20, rows: 4, in: "\x1b[?7l0123456789abcdefghijK\x1b[?7hLM",
			lines: []string{"0123456789abcdefghiK", "LM"}, row: 1, col: 2},
		{name: "one at a time then ?7h", cols: 20, rows: 4, in: "\x1b[?7l0123456789abcdefghij\x1b[?7hL",
			lines: []string{"0123456789abcdefghij", "L"}, row: 1, col: 1},
		{name: "non-ASCII then ?7h", cols: 20, rows: 4, in: "\x1b[?7l0123456789abcdefghiéü\x1b[?7hxy",
			lines: []string{"0123456789abcdefghiü", "xy"}, row: 1, col: 2},
		{name: "?7l while pending", cols: 20, rows: 4, in: "0123456789abcdefghij\x1b[?7l\x1b[?7hX",
			lines: []string{"0123456789abcdefghij", "X"}, row: 1, col: 1},
		{name: "combining mark", cols: 20, rows: 4, in: "\x1b[?7l0123456789abcdefghij\u0301",
			lines: []string{"0123456789abcdefghij\u0301"}, row: 0, col: 19},
		{name: "EL 0", cols: 20, rows: 4, in: "\x1b[?7l0123456789abcdefghij\x1b[K",
			lines: []string{"0123456789abcdefghij"}, row: 0, col: 19},
		{name: "CR clears it", cols: 20, rows: 4, in: "\x1b[?7l0123456789abcdefghij\r\x1b[?7hX",
			lines: []string{"X123456789abcdefghij"}, row: 0, col: 1},
	})
	s := New(20, 4, Options{})
	s.Write([]byte("\x1b[?7l0123456789abcdefghij"))
	if s.PendingWrap() {
		t.Error("PendingWrap with autowrap off: the next character does not wrap")
	}
	s.Write([]byte("\x1b[?7h"))
	if !s.PendingWrap() {
		t.Error("no PendingWrap after ?7h")
	}
}

// TestDECRCKeepsOriginMode: DECSC saves no modes, so DECRC leaves origin
// mode as it is (alacritty keeps DECOM in its mode flags, not in the
// saved cursor; xterm.js the same; xterm would restore it).
func TestDECRCKeepsOriginMode(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "saved on, restored off", cols: 10, rows: 6, in: "\x1b[2;4r\x1b[?6h\x1b7\x1b[?6l\x1b8\x1b[HX",
			lines: []string{"X"}, row: 0, col: 1},
		{name: "saved off, restored on", cols: 10, rows: 6, in: "\x1b[2;4r\x1b7\x1b[?6h\x1b8\x1b[HX",
			lines: []string{"", "X"}, row: 1, col: 1},
	})
}

// TestTallerScreenTakesBackScrollback: growing the height of the main
// screen brings the newest scrollback lines back, one per row gained,
// and moves the cursor (and the saved cursor) down with its text, as
// alacritty's grow_lines ("Move cursor down for every line pulled from
// history"), tmux and xterm.js do.
func TestTallerScreenTakesBackScrollback(t *testing.T) {
	nine := "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n9"
	screenLines := func(s *Screen) string {
		_, rows := s.Size()
		var l []string
		for n := 1; n <= rows; n++ {
			l = append(l, s.Line(n, false))
		}
		return strings.Join(l, "|")
	}
	cases := []struct {
		name, in    string
		cols, rows  int
		after       string // written after the resize
		screen      string
		scrollback  int
		row, col    int
		scrolledOff int
	}{
		{name: "rows only", in: nine, cols: 20, rows: 9,
			screen: "1|2|3|4|5|6|7|8|9", row: 8, col: 1},
		{name: "more rows than scrollback", in: nine, cols: 20, rows: 11,
			screen: "1|2|3|4|5|6|7|8|9||", row: 8, col: 1},
		{name: "fewer rows than scrollback", in: nine, cols: 20, rows: 7,
			screen: "3|4|5|6|7|8|9", scrollback: 2, row: 6, col: 1, scrolledOff: 2},
		{name: "with a width change", in: nine, cols: 30, rows: 9,
			screen: "1|2|3|4|5|6|7|8|9", row: 8, col: 1},
		{name: "cursor not on the bottom row", in: nine + "\x1b[2;1H", cols: 20, rows: 8,
			screen: "2|3|4|5|6|7|8|9", scrollback: 1, row: 3, col: 0, scrolledOff: 1},
		{name: "saved cursor moves with its line", in: nine + "\x1b[4;1H\x1b7\x1b[6;1H", cols: 20, rows: 9,
			after: "\x1b8X", screen: "1|2|3|4|5|6|X|8|9", row: 6, col: 1},
		{name: "under the alternate screen", in: nine + "\x1b[?1049h\x1b[Halt", cols: 20, rows: 9,
			after: "\x1b[?1049lX", screen: "1|2|3|4|5|6|7|8|9X", row: 8, col: 2},
		{name: "a wrapped row", in: "1\r\n2\r\nabcdefghijklmnopqrstuvwxy\r\n4\r\n5\r\n6\r\n7\r\n8", cols: 20, rows: 8,
			screen: "2|abcdefghijklmnopqrst|uvwxy|4|5|6|7|8", scrollback: 1, row: 7, col: 1, scrolledOff: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(20, 6, Options{})
			s.Write([]byte(tc.in))
			s.Resize(tc.cols, tc.rows)
			s.Write([]byte(tc.after))
			if got := screenLines(s); got != tc.screen {
				t.Errorf("screen %q, want %q", got, tc.screen)
			}
			if n := s.ScrollbackLen(); n != tc.scrollback {
				t.Errorf("scrollback holds %d lines, want %d", n, tc.scrollback)
			}
			if r, c := s.Cursor(); r != tc.row || c != tc.col {
				t.Errorf("cursor %d,%d, want %d,%d", r, c, tc.row, tc.col)
			}
			if tc.cols == 20 && s.ScrolledOff() != tc.scrolledOff {
				t.Errorf("ScrolledOff %d, want %d", s.ScrolledOff(), tc.scrolledOff)
			}
		})
	}

	// Shorter and taller again is the screen it was, and a wrapped line
	// taken back still re-joins on a width change.
	s := New(20, 9, Options{})
	s.Write([]byte(nine + "\r\nabcdefghijklmnopqrstuvwxy"))
	want := screenLines(s)
	s.Resize(20, 4)
	s.Resize(20, 9)
	if got := screenLines(s); got != want || s.ScrollbackLen() != 2 {
		t.Errorf("after 20x4 and back: %q (scrollback %d), want %q (2)", got, s.ScrollbackLen(), want)
	}
	s.Resize(30, 9)
	if got := s.Line(9, false); got != "abcdefghijklmnopqrstuvwxy" {
		t.Errorf("line 9 at 30 columns = %q", got)
	}
}
