package screen

import "testing"

// TestTabAtPendingWrap: a tab with the cursor in the last column and a
// wrap pending is a line break, as in alacritty (interminai's xterm mode),
// so the text after it starts the next row, and so does the cursor: a CR
// after the tab stays on that row. CHT moves nowhere and keeps the wrap
// pending (alacritty, xterm.js and tmux). The last cases are the stream
// where the text after a tab once went a row too high: a DECSTBM past the
// bottom, ?1049h, ?6l, insert-line, then tabs.
func TestTabAtPendingWrap(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "tab", cols: 10, rows: 5, in: "\tab\tcd", lines: []string{"        ab", "cd"}, row: 1, col: 2},
		{name: "tab alone", cols: 10, rows: 5, in: "abcdefghij\t", lines: []string{"abcdefghij"}, row: 1, col: 0},
		{name: "CR after the tab", cols: 10, rows: 5, in: "abcdefghij\t\rX", lines: []string{"abcdefghij", "X"}, row: 1, col: 1},
		{name: "tab at the bottom scrolls", cols: 10, rows: 2, in: "1\r\nabcdefghij\t\rX", lines: []string{"abcdefghij", "X"}, row: 1, col: 1},
		{name: "autowrap off", cols: 10, rows: 5, in: "\x1b[?7labcdefghij\t\rX", lines: []string{"Xbcdefghij"}, row: 0, col: 1},
		{name: "CHT", cols: 10, rows: 5, in: "abcdefghij\x1b[2Icd", lines: []string{"abcdefghij", "cd"}, row: 1, col: 2},
		{name: "CHT then CR", cols: 10, rows: 5, in: "abcdefghij\x1b[I\rX", lines: []string{"Xbcdefghij"}, row: 0, col: 1},
		{name: "no wrap pending", cols: 10, rows: 5, in: "abcdefghi\tc", lines: []string{"abcdefghic"}, row: 0, col: 9},
		{name: "region past the bottom", cols: 10, rows: 5,
			in:    "1\r\n2\r\n3\r\n4\r\n5\x1b[2;9r\x1b[?1049h\x1b[?6l\x1b[3;1H\x1b[2L\tab\tcd",
			lines: []string{"", "", "        ab", "cd"}, row: 3, col: 2},
	})
}

// TestTabLineBreakReflows: the row a tab broke is soft-wrapped, as
// alacritty's wrapline marks it, so a wider screen joins it with the next.
func TestTabLineBreakReflows(t *testing.T) {
	s := New(10, 4, Options{})
	s.Write([]byte("abcdefghij\tcd"))
	s.Resize(20, 4)
	if got := s.Line(1, false); got != "abcdefghijcd" {
		t.Errorf("line 1 after widening = %q, want %q", got, "abcdefghijcd")
	}
	if row, col := s.Cursor(); row != 0 || col != 12 {
		t.Errorf("cursor = %d,%d, want 0,12", row, col)
	}
}
