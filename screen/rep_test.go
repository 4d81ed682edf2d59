package screen

import "testing"

// TestREP checks that REP repeats only a character that was the last
// thing in the stream, and repeats the whole grapheme, as xterm.js and
// tmux do.
func TestREP(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "after text", in: "ab\x1b[3b", lines: []string{"abbbb"}, col: 5},
		{name: "after SGR", in: "ab\x1b[31m\x1b[3b", lines: []string{"ab"}, col: 2},
		{name: "after CUF", in: "ab\x1b[C\x1b[2b", lines: []string{"ab"}, col: 3},
		{name: "after BS", in: "ab\b\x1b[2b", lines: []string{"ab"}, col: 1},
		{name: "after CR", in: "ab\r\x1b[2b", lines: []string{"ab"}, col: 0},
		{name: "after OSC", in: "ab\x1b]0;t\x07\x1b[2b", lines: []string{"ab"}, col: 2},
		{name: "after ESC", in: "ab\x1b7\x1b[2b", lines: []string{"ab"}, col: 2},
		{name: "after REP", in: "ab\x1b[b\x1b[2b", lines: []string{"abb"}, col: 3},
		{name: "text again", in: "a\x1b[mb\x1b[b", lines: []string{"abb"}, col: 3},
		{name: "wide", in: "中\x1b[2b", lines: []string{"中中中"}, col: 6},
		{name: "combining", in: "e\u0301\x1b[2b", lines: []string{"e\u0301e\u0301e\u0301"}, col: 3},
		{name: "combining wide", in: "中\u0301\x1b[b", lines: []string{"中\u0301中\u0301"}, col: 4},
		{name: "at the margin", cols: 4, rows: 3, in: "abcd\x1b[2b", lines: []string{"abcd", "dd"}, row: 1, col: 2},
	})
}
