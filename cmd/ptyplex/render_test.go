//go:build unix

package main

import (
	"encoding/json"
	"testing"

	"github.com/ptyplex/ptyplex/session/wire"
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
	out := wire.OutputData{Screen: "s2\ns1\nl1\nl2\n", From: -2, To: 2, Cursor: wire.Cursor{Row: 1, Col: 0}}
	got := renderOutput(out, "both", true)
	want := "Cursor: row 2, col 1\n-2\ts2\n-1\ts1\n 1\tl1\n 2\t\x1b[7ml\x1b[27m2\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	wide := wire.OutputData{Screen: "a\nb\n", From: -120, To: -119}
	if got := renderOutput(wide, "none", true); got != "-120\ta\n-119\tb\n" {
		t.Errorf("three-digit numbering: %q", got)
	}
	screen := wire.OutputData{Screen: "x\n", From: 1, To: 1}
	if got := renderOutput(screen, "none", true); got != " 1\tx\n" {
		t.Errorf("single line: %q", got)
	}
}

// The rows and the number width come from from/to, whether or not the
// daemon ends the last row with a newline.
func TestRenderOutputRowsFromRange(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  wire.OutputData
		want string
	}{
		{"trailing newline", wire.OutputData{Screen: "a\nb\n", From: 1, To: 2}, " 1\ta\n 2\tb\n"},
		{"no trailing newline", wire.OutputData{Screen: "a\nb", From: 1, To: 2}, " 1\ta\n 2\tb\n"},
		{"blank last row, no newline", wire.OutputData{Screen: "a\n", From: 1, To: 2}, " 1\ta\n 2\t\n"},
		{"blank last row, newline", wire.OutputData{Screen: "a\n\n", From: 1, To: 2}, " 1\ta\n 2\t\n"},
		{"all blank, nothing sent", wire.OutputData{Screen: "", From: 1, To: 3}, " 1\t\n 2\t\n 3\t\n"},
		{"width from the range", wire.OutputData{Screen: "x\ny", From: 9, To: 10}, " 09\tx\n 10\ty\n"},
		{"across the boundary", wire.OutputData{Screen: "s\nl", From: -1, To: 1}, "-1\ts\n 1\tl\n"},
		{"empty range", wire.OutputData{Screen: "", From: 1, To: -1}, ""},
	} {
		if got := renderOutput(tc.out, "none", true); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestOutputAnswerWithoutRange(t *testing.T) {
	for _, tc := range []struct{ answer, want string }{
		// No from/to: the whole screen, by its size.
		{`{"screen":"a\nb","size":{"rows":3,"cols":10}}`, " 1\ta\n 2\tb\n 3\t\n"},
		// Not even a size: the lines of the text.
		{`{"screen":"a\nb\n"}`, " 1\ta\n 2\tb\n"},
		{`{"screen":""}`, ""},
		{`{"screen":"s\n","from":-1,"to":-1,"size":{"rows":3,"cols":10}}`, "-1\ts\n"},
	} {
		var a outputAnswer
		if err := json.Unmarshal([]byte(tc.answer), &a); err != nil {
			t.Fatal(err)
		}
		if got := renderOutput(a.resolved(), "none", true); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.answer, got, tc.want)
		}
	}
}
