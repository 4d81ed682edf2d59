//go:build unix

package changetext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/session/wire"
)

var cliHints = Hints{
	Range:  func(a, b int) string { return fmt.Sprintf("--from %d --to %d", a, b) },
	Budget: "--max-chars 20",
	Next:   "the next --since read",
}

func TestRender(t *testing.T) {
	cur := wire.Cursor{Row: 3, Col: 6}
	for _, c := range []struct {
		name string
		out  wire.OutputData
		want string
	}{
		{"full read", wire.OutputData{Screen: "$ ls\nfile\n\n\n", From: 1, To: 4, Size: wire.Size{Rows: 4, Cols: 20}, Cursor: cur, Token: "0a0b0c0d.1"},
			"@@ screen 20x4, lines 1..4, cursor 4:7, token 0a0b0c0d.1 @@\n1: $ ls\n2: file\n3..4: (blank)\n"},
		{"unchanged", wire.OutputData{Since: "0a0b0c0d.1", Unchanged: true, Cursor: cur, Token: "0a0b0c0d.2"},
			"@@ unchanged, cursor 4:7, token 0a0b0c0d.2 @@\n"},
		{"cursor only", wire.OutputData{Since: "t", Cursor: cur, Token: "u"},
			"@@ no rows changed, cursor 4:7, token u @@\n"},
		{"rows and a scroll", wire.OutputData{Since: "t", Scrolled: 3, ScrollbackLost: 1, Cursor: cur, Token: "u",
			Changed: []wire.Line{{N: -1, Text: "gone"}, {N: 2, Text: "b"}, {N: 3, Text: "c"}, {N: 5, Text: ""}}},
			"@@ scrolled 3, 1 of them no longer in the scrollback, rows 2..3,5 changed, cursor 4:7, token u @@\n-1: gone\n2: b\n3: c\n5: \n"},
		{"moves", wire.OutputData{Since: "t", Moved: []wire.Move{{From: 6, To: 5, Rows: 18}}, Cursor: cur, Token: "u",
			Changed: []wire.Line{{N: 23, Text: "x"}}},
			"@@ rows 6..23 moved to 5..22, rows 23 changed, cursor 4:7, token u @@\n23: x\n"},
		{"moves alone", wire.OutputData{Since: "t", Moved: []wire.Move{{From: 2, To: 1, Rows: 1}}, Cursor: cur, Token: "u"},
			"@@ rows 2 moved to 1, cursor 4:7, token u @@\n"},
		{"redraw", wire.OutputData{Since: "t", Redraw: "screen", Cursor: cur, Token: "u",
			Changed: []wire.Line{{N: 1, Text: "~"}, {N: 2, Text: ""}, {N: 3, Text: ""}, {N: -1, Text: ""}}},
			"@@ redraw (the program switched between the main and alternate screen): every row follows, cursor 4:7, token u @@\n1: ~\n2..3: (blank)\n-1: \n"},
		{"blank run across the boundary", wire.OutputData{Since: "t", Cursor: cur, Token: "u", ScrollbackCleared: true,
			Changed: []wire.Line{{N: -1, Text: ""}, {N: 1, Text: ""}}},
			"@@ scrollback cleared, rows 1 changed, cursor 4:7, token u @@\n-1..1: (blank)\n"},
		{"cut", wire.OutputData{Since: "t", Cursor: cur, Token: "u", Cut: &wire.Cut{Lines: 2, Chars: 30, From: 1, To: 2},
			Changed: []wire.Line{{N: 3, Text: "c"}}},
			"@@ rows 3 changed, cursor 4:7, token u @@\n@@ cut 2 lines (1..2, 30 chars) to fit --max-chars 20; the rest: --from 1 --to 2, or the next --since read, which repeats cut screen rows @@\n3: c\n"},
		{"every changed row cut", wire.OutputData{Since: "t", Cursor: cur, Token: "u", Cut: &wire.Cut{Lines: 2, Chars: 30, From: 1, To: 2}},
			"@@ changed rows all cut, cursor 4:7, token u @@\n@@ cut 2 lines (1..2, 30 chars) to fit --max-chars 20; the rest: --from 1 --to 2, or the next --since read, which repeats cut screen rows @@\n"},
	} {
		if got := Render(c.out, cliHints); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

func TestEnforceBudget(t *testing.T) {
	// An older daemon's answer: the whole range, no last newline; the
	// cursor on the prompt (row 3, blank).
	out := wire.OutputData{Screen: "$ ls\nfile\n", From: 1, To: 3, Cursor: wire.Cursor{Row: 2}}
	EnforceBudget(&out, 6)
	if out.Screen != "file\n" || out.From != 2 || out.To != 2 || out.Cut == nil || *out.Cut != (wire.Cut{Lines: 1, Chars: 5, From: 1, To: 1}) {
		t.Errorf("cut: %+v %+v", out, out.Cut)
	}
	// Blank rows neither push text out nor are sent: the 40x10
	// screen with two lines of text and eight blank rows.
	blanks := wire.OutputData{Screen: "first line of text\nsecond line here\n" + strings.Repeat("\n", 8), From: 1, To: 10, Cursor: wire.Cursor{Row: 1, Col: 16}}
	EnforceBudget(&blanks, 20)
	if blanks.Screen != "second line here\n" || blanks.From != 2 || blanks.To != 2 || blanks.Cut == nil || blanks.Cut.Lines != 1 {
		t.Errorf("blank rows: %+v %+v", blanks, blanks.Cut)
	}
	// The cursor above the last text (an editor): the rows farthest from
	// it go first, below it as well as above, and the note names both.
	ed := wire.OutputData{Screen: "l1\nl2\nl3\nl4\nl5\nl6\nstatus\n\n", From: 1, To: 8, Cursor: wire.Cursor{Row: 2, Col: 1}}
	EnforceBudget(&ed, 9)
	if ed.Screen != "l2\nl3\nl4\n" || ed.From != 2 || ed.To != 4 || ed.Cut == nil || *ed.Cut != (wire.Cut{Lines: 1, Chars: 3, From: 1, To: 1}) ||
		ed.CutBelow == nil || *ed.CutBelow != (wire.Cut{Lines: 3, Chars: 13, From: 5, To: 7}) {
		t.Errorf("cursor above the text: %+v %+v %+v", ed, ed.Cut, ed.CutBelow)
	}
	// What the daemon cut, or what fits, stays.
	fits := wire.OutputData{Screen: "a\nb\n", From: -1, To: 1}
	EnforceBudget(&fits, 4)
	if fits.Cut != nil || fits.Screen != "a\nb\n" {
		t.Errorf("fitting answer changed: %+v", fits)
	}
	// Across the boundary: from -2 with the first two cut starts at 1.
	sb := wire.OutputData{Screen: "x\ny\nz\n", From: -2, To: 1}
	EnforceBudget(&sb, 2)
	if sb.From != 1 || sb.Screen != "z\n" || sb.Cut.To != -1 {
		t.Errorf("across the boundary: %+v %+v", sb, sb.Cut)
	}
}

func TestRenderNotes(t *testing.T) {
	cur := wire.Cursor{Row: 0, Col: 0}
	for _, c := range []struct {
		name string
		out  wire.OutputData
		want string
	}{
		// A full read of an empty range says so instead of "lines 1..0".
		{"full read, no lines", wire.OutputData{From: 1, To: 0, Size: wire.Size{Rows: 2, Cols: 10}, Cursor: cur},
			"@@ screen 10x2, no lines, cursor 1:1 @@\n"},
		{"redraw after a resize", wire.OutputData{Since: "t", Redraw: "resize", Cursor: cur, Token: "u"},
			"@@ redraw (the size changed): every row follows, cursor 1:1, token u @@\n"},
		{"redraw for the other format", wire.OutputData{Since: "t", Redraw: "format", Cursor: cur, Token: "u"},
			"@@ redraw (the token was for the other colour format): every row follows, cursor 1:1, token u @@\n"},
		// A reason this client does not know (a newer daemon's) is shown
		// as the daemon named it rather than dropped.
		{"redraw for an unknown reason", wire.OutputData{Since: "t", Redraw: "newer-reason", Cursor: cur, Token: "u"},
			"@@ redraw (newer-reason): every row follows, cursor 1:1, token u @@\n"},
		// The note on what went below comes after the lines, singular for
		// one line, and a full read does not offer the next changes read.
		{"cut below, one line, full read", wire.OutputData{Screen: "a\n", From: 1, To: 1, Size: wire.Size{Rows: 2, Cols: 10}, Cursor: cur,
			CutBelow: &wire.Cut{Lines: 1, Chars: 4, From: 2, To: 2}},
			"@@ screen 10x2, lines 1, cursor 1:1 @@\n1: a\n@@ cut 1 line below (2, 4 chars) to fit --max-chars 20; the rest: --from 2 --to 2 @@\n"},
		{"cut above and below, changes read", wire.OutputData{Since: "t", Cursor: cur, Token: "u",
			Cut:      &wire.Cut{Lines: 1, Chars: 2, From: 1, To: 1},
			Changed:  []wire.Line{{N: 2, Text: "b"}},
			CutBelow: &wire.Cut{Lines: 2, Chars: 6, From: 3, To: 4}},
			"@@ rows 2 changed, cursor 1:1, token u @@\n" +
				"@@ cut 1 line (1, 2 chars) to fit --max-chars 20; the rest: --from 1 --to 1, or the next --since read, which repeats cut screen rows @@\n" +
				"2: b\n" +
				"@@ cut 2 lines below (3..4, 6 chars) to fit --max-chars 20; the rest: --from 3 --to 4, or the next --since read, which repeats cut screen rows @@\n"},
	} {
		if got := Render(c.out, cliHints); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

func TestEnforceBudgetLeavesAlone(t *testing.T) {
	base := wire.OutputData{Screen: "long line one\nlong line two\n", From: 1, To: 2, Cursor: wire.Cursor{Row: 1}}
	for _, c := range []struct {
		name   string
		mutate func(*wire.OutputData)
		budget int
	}{
		{"no budget", func(*wire.OutputData) {}, 0},
		{"negative budget", func(*wire.OutputData) {}, -5},
		{"already cut above", func(o *wire.OutputData) { o.Cut = &wire.Cut{Lines: 1, From: -1, To: -1} }, 3},
		{"already cut below", func(o *wire.OutputData) { o.CutBelow = &wire.Cut{Lines: 1, From: 3, To: 3} }, 3},
		// A changes read is the daemon's to cut; this only fixes plain reads.
		{"changes read", func(o *wire.OutputData) { o.Since = "t" }, 3},
	} {
		out := base
		c.mutate(&out)
		want := out
		EnforceBudget(&out, c.budget)
		if out.Screen != want.Screen || out.From != want.From || out.To != want.To || out.Cut != want.Cut || out.CutBelow != want.CutBelow {
			t.Errorf("%s: answer changed: %+v, want %+v", c.name, out, want)
		}
	}
}

func TestEnforceBudgetEdges(t *testing.T) {
	// More text rows than the range names: the extra rows are not the
	// range's and are neither sent nor charged.
	extra := wire.OutputData{Screen: "a\nb\nc\nd", From: 1, To: 2, Cursor: wire.Cursor{Row: 1}}
	EnforceBudget(&extra, 100)
	if extra.Screen != "a\nb\n" || extra.From != 1 || extra.To != 2 || extra.Cut != nil || extra.CutBelow != nil {
		t.Errorf("extra rows: %+v", extra)
	}
	// Only blank rows: nothing is sent, nothing is named cut, and the
	// range is empty at its start.
	blank := wire.OutputData{Screen: "\n\n\n", From: 1, To: 3}
	EnforceBudget(&blank, 5)
	if blank.Screen != "" || blank.From != 1 || blank.To != 0 || blank.Cut != nil || blank.CutBelow != nil {
		t.Errorf("blank rows: %+v", blank)
	}
	// A budget smaller than the only line cuts it all; the empty range
	// that is left starts after the cut, skipping the line number 0.
	all := wire.OutputData{Screen: "scrollback line\n", From: -1, To: -1}
	EnforceBudget(&all, 1)
	if all.Screen != "" || all.Cut == nil || *all.Cut != (wire.Cut{Lines: 1, Chars: 16, From: -1, To: -1}) || all.From != 1 || all.To != 0 {
		t.Errorf("all cut, in the scrollback: %+v %+v", all, all.Cut)
	}
	scr := wire.OutputData{Screen: "x\ny\n", From: 3, To: 4, Cursor: wire.Cursor{Row: 3}}
	EnforceBudget(&scr, 1)
	if scr.Screen != "" || scr.Cut == nil || scr.Cut.From != 3 || scr.Cut.To != 4 || scr.From != 5 || scr.To != 4 {
		t.Errorf("all cut, on the screen: %+v %+v", scr, scr.Cut)
	}
}
