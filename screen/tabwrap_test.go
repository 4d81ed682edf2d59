package screen

import "testing"

// TestTabAtPendingWrap: a tab with the cursor in the last column and a
// wrap pending moves nowhere and keeps the wrap pending, so the text after
// it starts the next row, as in xterm.js and tmux. The last cases are the
// stream where this showed: a DECSTBM past the bottom, ?1049h, ?6l,
// insert-line, then tabs.
func TestTabAtPendingWrap(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "tab", cols: 10, rows: 5, in: "\tab\tcd", lines: []string{"        ab", "cd"}, row: 1, col: 2},
		{name: "CHT", cols: 10, rows: 5, in: "abcdefghij\x1b[2Icd", lines: []string{"abcdefghij", "cd"}, row: 1, col: 2},
		{name: "no wrap pending", cols: 10, rows: 5, in: "abcdefghi\tc", lines: []string{"abcdefghic"}, row: 0, col: 9},
		{name: "region past the bottom", cols: 10, rows: 5,
			in:    "1\r\n2\r\n3\r\n4\r\n5\x1b[2;9r\x1b[?1049h\x1b[?6l\x1b[3;1H\x1b[2L\tab\tcd",
			lines: []string{"", "", "        ab", "cd"}, row: 3, col: 2},
	})
}
