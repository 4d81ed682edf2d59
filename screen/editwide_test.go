package screen

import (
	"fmt"
	"strings"
	"testing"
)

// TestWideEditing pins down what every editing operation does to wide
// characters, at every position relative to them. The expected screens
// are what xterm.js 6 (headless) shows for the same bytes; the
// differential test re-checks them against the live library.
func TestWideEditing(t *testing.T) { runScreenCases(t, wideEditingCases) }

const wideLine = "日本語hellox\r" // 日 at 0-1, 本 at 2-3, 語 at 4-5

var wideEditingCases = []screenCase{
	{name: "ICH on lead moves it whole", cols: 20, rows: 2, in: wideLine + "\x1b[1@", lines: []string{" 日本語hellox"}},
	{name: "ICH between wide", cols: 20, rows: 2, in: wideLine + "\x1b[2C\x1b[1@", lines: []string{"日 本語hellox"}, col: 2},
	{name: "ICH on trail blanks the cut char", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[1@", lines: []string{"   本語hellox"}, col: 1},
	{name: "ICH 2 on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[2@", lines: []string{"    本語hellox"}, col: 1},
	{name: "ICH pushes wide half off", in: "1234567日\r\x1b[1@", lines: []string{" 1234567日"}},
	{name: "ICH pushes wide off whole", in: "1234567日\r\x1b[2@", lines: []string{"  1234567"}},
	{name: "ICH wide at margin cut", in: "12345678日\r\x1b[1@", lines: []string{" 12345678"}},
	{name: "DCH on lead", cols: 20, rows: 2, in: wideLine + "\x1b[1P", lines: []string{" 本語hellox"}},
	{name: "DCH on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[1P", lines: []string{" 本語hellox"}, col: 1},
	{name: "DCH whole wide", cols: 20, rows: 2, in: wideLine + "\x1b[2P", lines: []string{"本語hellox"}},
	{name: "DCH trail to trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[2P", lines: []string{"  語hellox"}, col: 1},
	{name: "DCH to margin", in: "a日本語hell\x1b[1;9H\x1b[5P", lines: []string{"a日本語h", "l"}, col: 8},
	{name: "ECH on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[1X", lines: []string{"  本語hellox"}, col: 1},
	{name: "ECH on lead", cols: 20, rows: 2, in: wideLine + "\x1b[2C\x1b[1X", lines: []string{"日  語hellox"}, col: 2},
	{name: "EL 0 on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[K", col: 1},
	{name: "EL 1 on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[1K", lines: []string{"  本語hellox"}, col: 1},
	{name: "EL 1 on lead", cols: 20, rows: 2, in: wideLine + "\x1b[2C\x1b[1K", lines: []string{"    語hellox"}, col: 2},
	{name: "ED 1 on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[1J", lines: []string{"  本語hellox"}, col: 1},
	{name: "ED 0 on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[J", col: 1},
	{name: "IRM wide", in: "abc\r\x1b[4h日\x1b[4l", lines: []string{"日abc"}, col: 2},
	{name: "IRM wide pushes off", in: "abcdefghij\r\x1b[4h日\x1b[4l", lines: []string{"日abcdefgh"}, col: 2},
	{name: "IRM narrow cuts wide at margin", in: "abcdefgh日\r\x1b[4hX\x1b[4l", lines: []string{"Xabcdefgh"}, col: 1},
	{name: "IRM narrow keeps wide", in: "abcdefg日x\r\x1b[4hX\x1b[4l", lines: []string{"Xabcdefg日"}, col: 1},
	{name: "IRM on trail", cols: 20, rows: 2, in: wideLine + "\x1b[1C\x1b[4hX\x1b[4l", lines: []string{" X 本語hellox"}, col: 2},
	{name: "IRM wide on trail", cols: 20, rows: 2, in: wideLine + "\x1b[3C\x1b[4h中\x1b[4l", lines: []string{"日 中 語hellox"}, col: 5},
	{name: "IRM wide at last column wraps", in: "abcdefghi\x1b[4h日\x1b[4l", lines: []string{"abcdefghi", "日"}, row: 1, col: 2},
	{name: "IL in region with wide", in: "1\r\n日本\r\n3\r\n4\x1b[2;3r\x1b[2;1H\x1b[L", lines: []string{"1", "", "日本", "4"}, row: 1},
}

// TestMargins covers DECSLRM: left/right margins bound printing, wrapping,
// ICH/DCH, IL/DL and scrolling, and split wide characters at the margins.
func TestMargins(t *testing.T) {
	const fill = "0123456789\r\n0123456789\r\n0123456789\r\n0123456789"
	runScreenCases(t, []screenCase{
		{name: "CSI s saves without DECLRMM", in: "\x1b[2;3H\x1b[s\x1b[1;1H\x1b[uX", lines: []string{"", "  X"}, row: 1, col: 3},
		{name: "margins home the cursor", in: "\x1b[?69h\x1b[3;6s\x1b[3;3HX", lines: []string{"", "", "  X"}, row: 2, col: 3},
		{name: "printing wraps at the right margin", in: "\x1b[?69h\x1b[3;6s\x1b[1;3Habcdefg", lines: []string{"  abcd", "  efg"}, row: 1, col: 5},
		{name: "CR goes to the left margin", in: "\x1b[?69h\x1b[3;6s\x1b[1;5Hab\rX", lines: []string{"  X ab"}, col: 3},
		{name: "CR left of the margin goes to column 1", in: "\x1b[?69h\x1b[3;6s\x1b[1;2H\rX", lines: []string{"X"}, col: 1},
		{name: "origin mode counts from the margins", in: "\x1b[?69h\x1b[2;3r\x1b[3;6s\x1b[?6h\x1b[1;1HX\x1b[9;9HY", lines: []string{"", "  X", "     Y"}, row: 2, col: 5},
		{name: "ICH stops at the right margin", in: fill + "\x1b[?69h\x1b[3;6s\x1b[1;3H\x1b[2@",
			lines: []string{"01  236789", "0123456789", "0123456789", "0123456789"}, col: 2},
		{name: "DCH pulls from the right margin", in: fill + "\x1b[?69h\x1b[3;6s\x1b[1;3H\x1b[2P",
			lines: []string{"0145  6789", "0123456789", "0123456789", "0123456789"}, col: 2},
		{name: "ICH outside the margins does nothing", in: fill + "\x1b[?69h\x1b[3;6s\x1b[1;8H\x1b[2@",
			lines: []string{"0123456789", "0123456789", "0123456789", "0123456789"}, col: 7},
		{name: "IL scrolls only the margin columns", in: fill + "\x1b[?69h\x1b[3;6s\x1b[2;4H\x1b[L",
			lines: []string{"0123456789", "01    6789", "0123456789", "0123456789"}, row: 1, col: 2},
		{name: "DL scrolls only the margin columns", in: "aaaaaaaaaa\r\nbbbbbbbbbb\r\ncccccccccc\r\ndddddddddd\x1b[?69h\x1b[3;6s\x1b[2;4H\x1b[M",
			lines: []string{"aaaaaaaaaa", "bbccccbbbb", "ccddddcccc", "dd    dddd"}, row: 1, col: 2},
		{name: "LF at the bottom scrolls the rectangle", in: "aaaaaaaaaa\r\nbbbbbbbbbb\r\ncccccccccc\r\ndddddddddd\x1b[?69h\x1b[3;6s\x1b[4;4H\n",
			lines: []string{"aabbbbaaaa", "bbccccbbbb", "ccddddcccc", "dd    dddd"}, row: 3, col: 3},
		{name: "SU within margins keeps no scrollback", in: "aaaaaaaaaa\x1b[?69h\x1b[3;6s\x1b[S",
			lines: []string{"aa    aaaa"}},
		{name: "wide char split at the margin", in: "0日3456789\r\n\x1b[?69h\x1b[3;6s\x1b[1;3H\x1b[S",
			lines: []string{"0     6789"}, col: 2},
		{name: "resetting DECLRMM clears the margins", in: "\x1b[?69h\x1b[3;6s\x1b[?69l\x1b[1;1Habcdefgh", lines: []string{"abcdefgh"}, col: 8},
		{name: "wide char does not fit between margins", in: "\x1b[?69h\x1b[3;4s\x1b[1;3Hab中", lines: []string{"  ab", "  中"}, row: 1, col: 3},
	})
}

// TestAltScreenXterm checks ?47, ?1047 and ?1049 as xterm documents them.
func TestAltScreenXterm(t *testing.T) {
	runScreenCases(t, []screenCase{
		{name: "1049l on main restores the 1049h cursor", cols: 20, rows: 24,
			in:    "\x1b[5;5H\x1b[?1049h\x1b[?1049l\x1b[20;1H\x1b[?1049lX",
			lines: []string{"", "", "", "", "    X"}, row: 4, col: 5},
		{name: "47 does not clear the alternate screen", in: "abc\x1b[?47hxyz\x1b[?47ldef\x1b[?47h", lines: []string{"   xyz"}, col: 9},
		{name: "1047 clears on leaving", in: "abc\x1b[?1047hxyz\x1b[?1047ldef\x1b[?1047h", col: 9},
		{name: "1047l on main does not clear main", in: "abc\x1b[?1047l", lines: []string{"abc"}, col: 3},
		{name: "1049 clears on entry", in: "abc\x1b[?1049hxyz\x1b[?1049ldef\x1b[?1049h", col: 6},
		{name: "47 keeps the cursor", in: "ab\x1b[?47hX", lines: []string{"  X"}, col: 3},
		{name: "1049 back shows main", in: "ab\x1b[?1049hX\x1b[?1049l", lines: []string{"ab"}, col: 2},
		{name: "second 1049h saves in the alternate slot", in: "\x1b[2;3H\x1b[?1049h\x1b[4;4H\x1b[?1049h\x1b[?1049lX",
			lines: []string{"", "  X"}, row: 1, col: 3},
	})
}

// wideEveryColumn builds, for every column and both alignments of a row
// of wide characters, one case per editing operation. margins marks the
// cases that use DECSLRM, which xterm.js does not implement.
func wideEveryColumn() (cases []diffCase, margins []bool) {
	const cols, rows = 12, 3
	ops := []struct {
		name, seq string
		margin    bool
	}{
		{"ICH", "\x1b[@", false}, {"ICH3", "\x1b[3@", false}, {"DCH", "\x1b[P", false}, {"DCH3", "\x1b[3P", false},
		{"ECH", "\x1b[X", false}, {"ECH3", "\x1b[3X", false}, {"EL0", "\x1b[K", false}, {"EL1", "\x1b[1K", false},
		{"ED0", "\x1b[J", false}, {"ED1", "\x1b[1J", false}, {"IRMx", "\x1b[4hx\x1b[4l", false},
		{"IRMwide", "\x1b[4h中\x1b[4l", false}, {"print", "x", false}, {"printwide", "中", false},
		{"SUmargin", "\x1b[?69h\x1b[%d;%ds\x1b[S", true}, {"SDmargin", "\x1b[?69h\x1b[%d;%ds\x1b[T", true},
		{"ICHmargin", "\x1b[?69h\x1b[%d;%ds\x1b[1;%dH\x1b[2@", true}, {"DCHmargin", "\x1b[?69h\x1b[%d;%ds\x1b[1;%dH\x1b[2P", true},
	}
	for _, op := range ops {
		for shift := 0; shift < 2; shift++ {
			row := strings.Repeat(" ", shift) + "日本語中文字"
			for c := 0; c < cols; c++ {
				seq := op.seq
				if op.margin {
					if c+1 >= cols {
						continue
					}
					if strings.Count(seq, "%d") == 3 {
						seq = fmt.Sprintf(seq, c+1, cols-1, c+1)
					} else {
						seq = fmt.Sprintf(seq, c+1, cols-1)
					}
				}
				in := row + "\r\n" + row + "\x1b[1;" + fmt.Sprint(c+1) + "H" + seq
				cases = append(cases, diffCase{fmt.Sprintf("%s/shift%d/col%d", op.name, shift, c), cols, rows, []byte(in), nil})
				margins = append(margins, op.margin)
			}
		}
	}
	return cases, margins
}

// TestWideEveryColumn runs every editing operation at every column over
// wide characters and checks that no half character survives anywhere.
func TestWideEveryColumn(t *testing.T) {
	cases, _ := wideEveryColumn()
	for _, c := range cases {
		s := New(c.cols, c.rows, Options{})
		s.Write(c.data)
		for r := 0; r < c.rows; r++ {
			l := s.line(r)
			for i, ce := range l {
				lead := ce.flags&flagWideLead != 0
				trail := ce.flags&flagWideTrail != 0
				if lead && (i+1 >= len(l) || l[i+1].flags&flagWideTrail == 0) {
					t.Errorf("%s: row %d col %d: lead without trail: %q", c.name, r, i, s.Line(r+1, false))
				}
				if trail && (i == 0 || l[i-1].flags&flagWideLead == 0) {
					t.Errorf("%s: row %d col %d: trail without lead: %q", c.name, r, i, s.Line(r+1, false))
				}
			}
			if w := plainWidth(s.Line(r+1, false)); w > c.cols {
				t.Errorf("%s: row %d is %d cells wide", c.name, r, w)
			}
		}
	}
}
