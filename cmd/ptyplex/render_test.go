package main

import (
	"testing"

	"github.com/ptyplex/ptyplex/session"
)

func TestMarkCursor(t *testing.T) {
	for _, tc := range []struct {
		line string
		col  int
		want string
	}{
		{"abc", 1, "a\x1b[7mb\x1b[27mc"},
		{"abc", 0, "\x1b[7ma\x1b[27mbc"},
		{"ab", 4, "ab  \x1b[7m \x1b[27m"},
		{"", 0, "\x1b[7m \x1b[27m"},
		// Escapes take no columns and stay intact.
		{"\x1b[31mred\x1b[0m x", 1, "\x1b[31mr\x1b[7me\x1b[27md\x1b[0m x"},
		{"\x1b[1mab\x1b[0m", 3, "\x1b[1mab\x1b[0m \x1b[7m \x1b[27m"},
		// A wide character covers two columns; either one marks it.
		{"a世b", 1, "a\x1b[7m世\x1b[27mb"},
		{"a世b", 2, "a\x1b[7m世\x1b[27mb"},
		{"a世b", 3, "a世\x1b[7mb\x1b[27m"},
		// A combining mark stays with its base.
		{"e\u0301x", 0, "\x1b[7me\u0301\x1b[27mx"},
		{"e\u0301x", 1, "e\u0301\x1b[7mx\x1b[27m"},
	} {
		if got := markCursor(tc.line, tc.col); got != tc.want {
			t.Errorf("markCursor(%q, %d) = %q, want %q", tc.line, tc.col, got, tc.want)
		}
	}
}

func TestRenderOutputNumbering(t *testing.T) {
	out := session.OutputData{Screen: "s2\ns1\nl1\nl2\n", From: -2, To: 2, Cursor: session.Cursor{Row: 1, Col: 0}}
	got := renderOutput(out, "both", true)
	want := "Cursor: row 2, col 1\n-2\ts2\n-1\ts1\n 1\tl1\n 2\t\x1b[7ml\x1b[27m2\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	wide := session.OutputData{Screen: "a\nb\n", From: -120, To: -119}
	if got := renderOutput(wide, "none", true); got != "-120\ta\n-119\tb\n" {
		t.Errorf("three-digit numbering: %q", got)
	}
	screen := session.OutputData{Screen: "x\n", From: 1, To: 1}
	if got := renderOutput(screen, "none", true); got != " 1\tx\n" {
		t.Errorf("single line: %q", got)
	}
}
