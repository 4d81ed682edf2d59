//go:build unix

package persist

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
)

// snapshotFragments are the pieces FuzzSnapshotRestores builds streams
// from, one per input byte: modes set and reset, the regions, margins,
// saved cursors, the screens, resets, pens, character sets, titles and
// their stacks, tab stops, and text that wraps and scrolls. Origin mode is
// left out: DECRC restores it in xterm, as the screen does, and leaves it
// in xterm.js, as the tracker does for the host's sake
// (TestSnapshotKeepsTheMarginsAndTitles has it). A cursor saved while a
// wrap is pending, and a scroll region on the alternate screen, are left
// out too (FuzzSnapshotRestores).
var snapshotFragments = []string{
	"\x1b[?1h", "\x1b[?1l", "\x1b[?25h", "\x1b[?6l", "\x1b[?7h", "\x1b[?7l", "\x1b[?25l", "\x1b[?25h",
	"\x1b[?47h", "\x1b[?47l", "\x1b[?1047h", "\x1b[?1047l", "\x1b[?1049h", "\x1b[?1049l", "\x1b[?1048h", "\x1b[?1048l",
	"\x1b[?69h", "\x1b[?69l", "\x1b[3;12s", "\x1b[2;5r", "\x1b[r", "\x1b[4;30r",
	"\x1b[?1000h", "\x1b[?1002h", "\x1b[?1003l", "\x1b[?1006h", "\x1b[?1004h", "\x1b[?2004h", "\x1b[?2004l",
	"\x1b=", "\x1b>", "\x1b[4h", "\x1b[4l", "\x1b[20h", "\x1b[20l",
	"\x1b7", "\x1b8", "\x1b[s", "\x1b[u", "\x1bc", "\x1b[!p",
	"\x1b(0", "\x1b)0", "\x1b(B", "\x1b)B", "\x0e", "\x0f", "\x1b*0", "\x1bn", "\x1bo",
	"\x1b[1;31m", "\x1b[0m", "\x1b[38;2;1;2;3m", "\x1b[4:3;58;5;9m", "\x1b[7;44m", "\x1b[22;27m",
	"\x1b[5 q", "\x1b[0 q", "\x1b[?12h",
	"\x1b]0;zero\x07", "\x1b]2;two\x1b\\", "\x1b]1;icon\x07", "\x1b[22;0t", "\x1b[23;0t", "\x1b[22;2t", "\x1b[23;1t",
	"\x1bH", "\x1b[3g", "\x1b[g", "\x1b[5G\x1bH",
	"\x1b[H", "\x1b[3;7H", "\x1b[30;90H", "\x1b[2J", "\x1b[K", "\x1b[2L", "\x1b[M", "\x1b[2S", "\x1b[T", "\x1bM", "\x1bD",
	"text ", "lines\r\n", "\r\n\r\n\r\n", "\t|", "中文", "é", strings.Repeat("w", 23), "q",
}

// snapshotProbes are written after a SNAPSHOT and after the stream it
// stands for, to reach what a repaint hides: the saved cursors, the pen,
// the character sets, the main screen behind the alternate, the title
// stack, the tab stops, the region and margins, the wrap and insert
// modes.
var snapshotProbes = []string{
	"", "\x1b8P", "\x1b[uP", "after", "\x1b[?1049lM\x1b[?47lN\x1b[?1047lO", "\x1b[23;0t\x1b[23;1t",
	"\t1\t2\t3\t4", "lqk" + "\x0elqk", strings.Repeat("x\r\n", 30) + "\x1b[Hy\x1bMz", "\x1b[1;90HR" + strings.Repeat("s", 9),
	"\x1b[4hins\x1b[1Gi", "\x1b[5;1Ho\x1b[?6l\x1b[1;1Hp",
}

// FuzzSnapshotRestores: for any stream built of snapshotFragments, a
// screen fed its SNAPSHOT (no checkpoint: the tail is the whole stream)
// and then a probe shows what a screen fed the stream and the probe
// shows: lines with their attributes on both screens, the cursor, and
// every mode a host's emulator keeps. TestSnapshotRandomStreamsInXtermJS
// does the same with xterm.js as the screens.
func FuzzSnapshotRestores(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 2, 16, 20, 76, 78, 36, 10, 81, 86},
		{12, 50, 51, 46, 43, 76, 81, 10, 13, 70},
		{18, 19, 20, 21, 77, 35, 60, 65, 62, 84, 86},
		{48, 44, 42, 80, 54, 38, 11, 56, 57, 85, 79},
		{64, 61, 65, 62, 66, 68, 70, 72, 26, 29},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 200 {
			return
		}
		const cols, rows = 40, 12
		// A cursor saved with a wrap pending keeps it in xterm and in
		// the screen, not in xterm.js: a SNAPSHOT saves it without, so
		// the stream saves none.
		var b strings.Builder
		gen := screen.New(cols, rows, screen.Options{})
		for _, p := range picks {
			frag := snapshotFragments[int(p)%len(snapshotFragments)]
			scosc := strings.HasPrefix(frag, "\x1b[") && strings.HasSuffix(frag, "s") && !gen.PrivateMode(69)
			if (frag == "\x1b7" || scosc || frag == "\x1b[?1048h" || frag == "\x1b[?1049h") && gen.PendingWrap() {
				continue
			}
			// Each screen has a scroll region of its own in xterm.js
			// (the tracker's way), the alternate one's whole when
			// entered; one for both in xterm (the screen's). So the
			// alternate screen is entered only with the whole screen
			// as the region, and none is set on it.
			top, bottom := gen.ScrollRegion()
			enters := strings.HasPrefix(frag, "\x1b[?") && strings.HasSuffix(frag, "7h") || frag == "\x1b[?1049h"
			sets := strings.HasPrefix(frag, "\x1b[") && strings.HasSuffix(frag, "r") || frag == "\x1b[!p"
			if enters && !gen.AltScreen() && (top != 0 || bottom != rows-1) || sets && gen.AltScreen() {
				continue
			}
			gen.Write([]byte(frag))
			b.WriteString(frag)
		}
		tail := b.String()
		tr := newTracker(cols, rows, 1<<20)
		tr.Write([]byte(tail))
		st := snapshotTail{id: "s", cols: cols, rows: rows, tail: [][]byte{[]byte(tail)}, size: len(tail), final: tr.State()}
		data := decodeSnapshot(t, st.frame()).Data
		for _, probe := range snapshotProbes {
			want := screen.New(cols, rows, screen.Options{})
			want.Write([]byte(tail + probe))
			got := screen.New(cols, rows, screen.Options{})
			got.Write([]byte(data + probe))
			if d := screenDiff(got, want, rows); d != "" {
				t.Fatalf("after the SNAPSHOT and probe %q, against the stream %q and the probe:\n%s", probe, tail, d)
			}
		}
	})
}

// screenDiff says how got differs from want: both screens' lines with
// their attributes, the cursor and the modes a host's emulator keeps.
func screenDiff(got, want *screen.Screen, rows int) string {
	var d []string
	for _, alt := range []bool{false, true} {
		if alt && !want.AltScreen() {
			// xterm.js empties the alternate screen as it leaves it;
			// a SNAPSHOT does not draw a hidden one.
			continue
		}
		for n := 1; n <= rows; n++ {
			if g, w := visibleLine(got, alt, n), visibleLine(want, alt, n); g != w {
				d = append(d, fmt.Sprintf("alternate %v line %d: %q, want %q\n  (%q, want %q)", alt, n,
					got.AppendScreenLine(nil, alt, n, true), want.AppendScreenLine(nil, alt, n, true), g, w))
			}
		}
	}
	state := func(s *screen.Screen) string {
		r, c := s.Cursor()
		top, bottom := s.ScrollRegion()
		left, right := s.Margins()
		var modes []string
		for _, m := range []int{1, 6, 7, 12, 25, 69, 1000, 1002, 1003, 1004, 1006, 1049, 2004} {
			if s.PrivateMode(m) {
				modes = append(modes, fmt.Sprint(m))
			}
		}
		tabs := s.TabStops()
		return fmt.Sprintf("cursor %d,%d pending %v visible %v shape %d region %d-%d margins %d-%d modes %v insert %v newline %v keypad %v title %q pen %q charsets %q tabs %v",
			r, c, s.PendingWrap(), s.CursorVisible(), s.CursorStyle(), top, bottom, left, right, modes,
			s.InsertMode(), s.NewlineMode(), s.AppKeypad(), s.Title(), s.AppendPen(nil), s.AppendCharsets(nil), tabs)
	}
	if g, w := state(got), state(want); g != w {
		d = append(d, "got  "+g, "want "+w)
	}
	return strings.Join(d, "\n")
}

// visibleLine describes line n of s's main or alternate screen as it is
// seen: each cell's text and the attributes that show, so that a blank's
// foreground colour, bold or italic (which the lines a SNAPSHOT draws
// leave out at a line's end) count for nothing.
func visibleLine(s *screen.Screen, alt bool, n int) string {
	cols, _ := s.Size()
	src, row := s, n
	if alt != s.AltScreen() {
		// Not shown: drawn on a screen of its own to read its cells.
		src, row = screen.New(cols, 1, screen.Options{}), 1
		src.Write(s.AppendScreenLine(nil, alt, n, true))
	}
	var b strings.Builder
	for _, c := range src.Cells(row, nil) {
		if c.Text == "" || c.Text == " " {
			visible := c.Attrs & (screen.AttrUnderline | screen.AttrInverse | screen.AttrStrike)
			if c.Width == 0 {
				b.WriteString("|") // a wide character's right half
				continue
			}
			fmt.Fprintf(&b, " %v/%d", c.BG, visible)
			continue
		}
		fmt.Fprintf(&b, "%s%v%v%d", c.Text, c.FG, c.BG, c.Attrs)
	}
	return b.String()
}
