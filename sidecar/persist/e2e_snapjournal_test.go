//go:build unix

package persist_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// TestSnapshotPrimedAtAnyJournalStart: streams that set modes, the
// character sets, a scroll region, the pen, a saved cursor and tab stops,
// then write several times what a small journal holds. The SNAPSHOT
// (the journal's tail, primed with the tracker's checkpoint) fed to
// xterm.js headless, then a probe, must show what xterm.js fed the whole
// stream and the probe shows: the lines, the cursor and every mode
// modes.js reads. Each stream is played with 0-11 NULs
// before it and in reads of two sizes, so that the journal's start falls
// in the middle of sequences and of UTF-8 characters, and reads are cut
// anywhere.
func TestSnapshotPrimedAtAnyJournalStart(t *testing.T) {
	x := startXtermJS(t)
	const cols, rows, journal = 80, 24, 32 << 10
	repeat := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(f(i))
		}
		return b.String()
	}
	streams := []struct{ name, stream, probe string }{
		// A full-screen program: the alternate screen, a region, line
		// drawing in G1, a pen, then cursor-addressed text with no
		// newline (the audit's TUI).
		{"tui", "\x1b[?1049h\x1b[3;8r\x1b)0\x0e\x1b[1;31m" +
			repeat(9000, func(i int) string { return fmt.Sprintf("\x1b[%d;1Hcounter %07d", 3+i%6, i) }) +
			"\x1b[8;1H\nlqqk", "lqk\x0flqk"},
		// Lines scrolling in a region on the main screen, drawn with
		// line drawing in G0 and a colour.
		{"region-lines", "\x1b[3;8r\x1b(0\x1b[32m\x1b[3;1H" +
			repeat(4000, func(i int) string { return fmt.Sprintf("lqk %d x\r\n", i) }) + "end", "\r\nmore\x1bM\x1bMup"},
		// A cursor saved, and tab stops set, on the alternate screen,
		// then a screen redrawn over and over.
		{"saved-tabs-alt", "\x1b[?1049h\x1b[5;5H\x1b[32m\x1b7\x1b[0m\x1b[3g\x1b[7G\x1bH\x1b[15G\x1bH\x1b[H" +
			repeat(3000, func(i int) string { return fmt.Sprintf("\x1b[%d;1H\x1b[Kscreen %d", 1+i%24, i) }), "\x1b8X\r\tY\tZ"},
		// Tab stops set the way tabs(1) does (CR, spaces, HTS), and
		// a cursor saved after a CUP, on the main screen; then lines.
		{"tabs-command", "\r\x1b[3g    \x1bH      \x1bH\r\x1b[3;5H\x1b[7m\x1b7\x1b[0m\r\n" +
			repeat(4000, func(i int) string { return fmt.Sprintf("line %d\tcolumn\r\n", i) }), "\tA\tB\tC"},
		// UTF-8 text of every width with SGR and charset changes, so
		// that the journal's start falls in characters.
		{"utf8", "\x1b[?1h\x1b=\x1b[?2004h\x1b]2;title\x07\x1b[4:3m" +
			repeat(3000, func(i int) string { return fmt.Sprintf("中文 é %d ✓ \x1b[3%dm日本\x1b[39m\r\n", i, i%8) }), "after"},
		// Long sequences: OSC titles and SGR with many parameters.
		{"long-sequences", repeat(1500, func(i int) string {
			return fmt.Sprintf("\x1b]0;a rather long window title number %d\x07\x1b[38;2;%d;%d;%d;48;5;%dmtext %d\r\n", i, i%256, (i*7)%256, (i*13)%256, i%256, i)
		}), "x"},
	}
	for _, c := range streams {
		t.Run(c.name, func(t *testing.T) {
			failed := 0
			for pad := 0; pad < 12 && failed < 3; pad++ {
				for _, read := range []int{97, 4096} {
					stream := strings.Repeat("\x00", pad) + c.stream // NULs draw nothing
					var pieces [][]byte
					for s := stream; len(s) > 0; {
						n := min(read, len(s))
						pieces = append(pieces, []byte(s[:n]))
						s = s[n:]
					}
					data, start, err := persist.RenderSnapshotJournal(cols, rows, journal, pieces)
					if err != nil {
						t.Fatal(err)
					}
					if start == 0 {
						t.Fatalf("the journal lost nothing of %d bytes", len(stream))
					}
					for _, probe := range []string{"", c.probe} {
						want := x.state(t, cols, rows, []byte(stream+probe))
						got := x.state(t, cols, rows, []byte(data+probe))
						var diffs []string
						if !reflect.DeepEqual(want.Lines, got.Lines) {
							for i := range want.Lines {
								if i < len(got.Lines) && want.Lines[i] != got.Lines[i] {
									diffs = append(diffs, fmt.Sprintf("line %d: snapshot %q, stream %q", i+1, got.Lines[i], want.Lines[i]))
								}
							}
						}
						if want.Row != got.Row || want.Col != got.Col {
							diffs = append(diffs, fmt.Sprintf("cursor: snapshot %d,%d, stream %d,%d", got.Row, got.Col, want.Row, want.Col))
						}
						for k, w := range want.Modes {
							if g := got.Modes[k]; !reflect.DeepEqual(w, g) {
								diffs = append(diffs, fmt.Sprintf("%s: snapshot %v, stream %v", k, g, w))
							}
						}
						if len(diffs) > 0 {
							failed++
							t.Errorf("padding %d, reads of %d, journal from %d, probe %q:\n  %s", pad, read, start, probe, strings.Join(diffs, "\n  "))
							break
						}
					}
				}
			}
		})
	}
}
