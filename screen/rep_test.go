package screen

import "testing"

// TestREP checks that REP repeats only a character that was the last
// thing in the stream or was followed only by SGR, and repeats the whole
// grapheme. Across SGR the character is kept, as interminai does (its
// test_csi_repeat_after_sgr: `X ESC[1m ESC[3b` is XXXX; xterm.js and
// tmux repeat nothing there); everything else is as xterm.js and tmux.
func TestREP(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "after text", in: "ab\x1b[3b", lines: []string{"abbbb"}, col: 5},
		{name: "after SGR", in: "ab\x1b[31m\x1b[3b", lines: []string{"abbbb"}, col: 5},
		{name: "interminai after SGR", in: "X\x1b[1m\x1b[3b", lines: []string{"XXXX"}, col: 4},
		{name: "after SGR reset", in: "ab\x1b[m\x1b[2b", lines: []string{"abbb"}, col: 4},
		{name: "after two SGRs", in: "ab\x1b[1m\x1b[4;31m\x1b[b", lines: []string{"abb"}, col: 3},
		{name: "after private CSI m", in: "ab\x1b[>4;1m\x1b[2b", lines: []string{"ab"}, col: 2},
		{name: "after SGR then CUF", in: "ab\x1b[1m\x1b[C\x1b[2b", lines: []string{"ab"}, col: 3},
		{name: "after CUF then SGR", in: "ab\x1b[C\x1b[1m\x1b[2b", lines: []string{"ab"}, col: 3},
		{name: "after CUF", in: "ab\x1b[C\x1b[2b", lines: []string{"ab"}, col: 3},
		{name: "after BS", in: "ab\b\x1b[2b", lines: []string{"ab"}, col: 1},
		{name: "after CR", in: "ab\r\x1b[2b", lines: []string{"ab"}, col: 0},
		{name: "after OSC", in: "ab\x1b]0;t\x07\x1b[2b", lines: []string{"ab"}, col: 2},
		{name: "after ESC", in: "ab\x1b7\x1b[2b", lines: []string{"ab"}, col: 2},
		{name: "after REP", in: "ab\x1b[b\x1b[2b", lines: []string{"abb"}, col: 3},
		{name: "after REP and SGR", in: "ab\x1b[b\x1b[1m\x1b[2b", lines: []string{"abb"}, col: 3},
		{name: "text again", in: "a\x1b[mb\x1b[b", lines: []string{"abb"}, col: 3},
		{name: "wide", in: "中\x1b[2b", lines: []string{"中中中"}, col: 6},
		{name: "wide after SGR", in: "中\x1b[7m\x1b[b", lines: []string{"中中"}, col: 4},
		{name: "combining", in: "e\u0301\x1b[2b", lines: []string{"e\u0301e\u0301e\u0301"}, col: 3},
		{name: "combining after SGR", in: "e\u0301\x1b[1m\x1b[b", lines: []string{"e\u0301e\u0301"}, col: 2},
		{name: "combining wide", in: "中\u0301\x1b[b", lines: []string{"中\u0301中\u0301"}, col: 4},
		{name: "at the margin", cols: 4, rows: 3, in: "abcd\x1b[2b", lines: []string{"abcd", "dd"}, row: 1, col: 2},
		{name: "at the margin after SGR", cols: 4, rows: 3, in: "abcd\x1b[1m\x1b[2b", lines: []string{"abcd", "dd"}, row: 1, col: 2},
	})
}

// TestREPAfterSGRTakesNewPen checks that the repeats kept across SGR are
// drawn with the pen the SGR set, like any character printed after it.
func TestREPAfterSGRTakesNewPen(t *testing.T) {
	s := New(10, 2, Options{})
	s.Write([]byte("X\x1b[1m\x1b[2b"))
	want := New(10, 2, Options{})
	want.Write([]byte("X\x1b[1mXX"))
	if got, w := s.Line(1, true), want.Line(1, true); got != w {
		t.Errorf("line = %q, want %q (as if the repeats were typed after the SGR)", got, w)
	}
}
