package screen

import "testing"

// Sub-parameters (':') mean something to SGR only; any other sequence
// reads each ';'-separated field's first value, as vte (alacritty) and
// xterm.js do.
func TestSubParamsOutsideSGR(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "CUP 2:3 is CUP 2", cols: 10, rows: 4, in: "\x1b[2:3HX", lines: []string{"", "X"}, row: 1, col: 1},
		{name: "CUP 2:3;4", cols: 10, rows: 4, in: "\x1b[2:3;4HX", lines: []string{"", "   X"}, row: 1, col: 4},
		{name: "CUF 1:5", cols: 10, rows: 4, in: "a\x1b[1:5CX", lines: []string{"a X"}, col: 3},
		{name: "DECSTBM 3:1", cols: 10, rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2:1;3r\x1b[3;1H\nX", lines: []string{"1", "3", "X", "4"}, row: 2, col: 1},
		{name: "SGR keeps its sub-parameters", cols: 10, rows: 4, in: "\x1b[4:3;38:2::1:2:3mX", lines: []string{"X"}, col: 1},
	})
	s := New(10, 4, Options{})
	s.Write([]byte("\x1b[?7:25l"))
	if s.AutoWrap() || !s.CursorVisible() {
		t.Errorf("?7:25l: autowrap %v, cursor visible %v; want only autowrap off", s.AutoWrap(), s.CursorVisible())
	}
	s.Write([]byte("\x1b[4:2;38:2::1:2:3mX"))
	if got := s.Line(1, true); got != "\x1b[4;38;2;1;2;3mX\x1b[0m" {
		t.Errorf("SGR with sub-parameters rendered %q", got)
	}
}
