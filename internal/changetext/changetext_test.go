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
