package screen

import "testing"

// VPR moves as CUP does (xterm's CursorSet; xterm.js and alacritty agree):
// past a scroll region's bottom to the screen's edge, and within the
// region only in origin mode, where VPA and VPR keep the column even with
// a left margin.
func TestVerticalPositionMoves(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "VPR past the region's bottom", cols: 10, rows: 5,
			in: "\x1b[1;3r\x1b[3eX", lines: []string{"", "", "", "X"}, row: 3, col: 1},
		{name: "VPR to the screen's edge", cols: 10, rows: 5,
			in: "\x1b[2;3r\x1b[2;4H\x1b[9eX", lines: []string{"", "", "", "", "   X"}, row: 4, col: 4},
		{name: "VPR within the region in origin mode", cols: 10, rows: 5,
			in: "\x1b[2;3r\x1b[?6h\x1b[9eX", lines: []string{"", "", "X"}, row: 2, col: 1},
		{name: "VPR ends a pending wrap", cols: 10, rows: 5,
			in: "0123456789\x1b[eX", lines: []string{"0123456789", "         X"}, row: 1, col: 9},
		{name: "CUD still stops at the region's bottom", cols: 10, rows: 5,
			in: "\x1b[1;3r\x1b[3BX", lines: []string{"", "", "X"}, row: 2, col: 1},
		{name: "VPA keeps the column with a left margin in origin mode", cols: 20, rows: 4,
			in:    "\x1b[?69h\x1b[5;10s\x1b[?6h\x1b[1;1H\x1b[2dX\x1b[2dY\x1b[3dZ",
			lines: []string{"", "    XY", "      Z"}, row: 2, col: 7},
		{name: "VPR keeps the column with a left margin in origin mode", cols: 20, rows: 4,
			in:    "\x1b[?69h\x1b[5;10s\x1b[?6h\x1b[1;3H\x1b[eX",
			lines: []string{"", "      X"}, row: 1, col: 7},
		{name: "HPR stops at the right margin in origin mode", cols: 20, rows: 4,
			in:    "\x1b[?69h\x1b[5;10s\x1b[?6h\x1b[1;3H\x1b[30aX",
			lines: []string{"         X"}, row: 0, col: 9},
		{name: "HPR goes to the screen's edge outside origin mode", cols: 20, rows: 4,
			in:    "\x1b[?69h\x1b[5;10s\x1b[1;3H\x1b[30aX",
			lines: []string{"                   X"}, row: 0, col: 19},
	})
}
