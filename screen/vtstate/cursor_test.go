package vtstate

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
)

// cursorFrags build the streams TestCursorFollowsTheScreen feeds: text
// of every kind, the controls and sequences that move the cursor, regions,
// origin mode, margins, saved cursors, tab stops and resets.
var cursorFrags = []string{
	"text ", "lines\r\n", "\r", "\n", "\x08", "\t", "\t\t\t", "\x0b", strings.Repeat("w", 23), strings.Repeat("x", 81),
	"\r" + strings.Repeat("y", 40) + "\t", // a tab with a wrap pending: a line break (40 is the test's width)
	"é", "中文", "a\u0301", "\x1b(0lqk\x1b(B", "\x0e", "\x0f", "\x7f", "\x00",
	"\x1b[H", "\x1b[3;7H", "\x1b[30;90H", "\x1b[5f", "\x1b[2A", "\x1b[3B", "\x1b[4C", "\x1b[2D", "\x1b[2E", "\x1b[F",
	"\x1b[10G", "\x1b[5`", "\x1b[7d", "\x1b[3e", "\x1b[4a", "\x1b[2I", "\x1b[Z", "\x1b[2L", "\x1b[M", "\x1b[3@", "\x1b[2b",
	"\x1b[K", "\x1b[2J", "\x1b[X", "\x1b[P", "\x1b[S", "\x1b[T", "\x1bD", "\x1bE", "\x1bM",
	"\x1b[2;5r", "\x1b[4;10r", "\x1b[r", "\x1b[?6h", "\x1b[?6l", "\x1b[?7l", "\x1b[?7h", "\x1b[?69h", "\x1b[?69l", "\x1b[3;12s",
	"\x1b7", "\x1b8", "\x1b[s", "\x1b[u", "\x1b[?1049h", "\x1b[?1049l", "\x1b[?1048h", "\x1b[?1048l", "\x1b[?47h", "\x1b[?47l",
	"\x1bH", "\x1b[g", "\x1b[3g", "\x1b[?5W", "\x1b[!p", "\x1bc", "\x1b[20h", "\x1b[20l", "\x1b[4h", "\x1b[4l", "\x1b[?3l", "\x1b[?3h",
	"\x1b[1;31m", "\x1b]0;t\x07", "\x1b[5;1H\x1b[2;4H",
	"\x1b[4:2;7:3H", "\x1b[2:9e", "\x1b[3:1;8r", "\x1b[?6:7h", // sub-parameters: each field's first value
}

// TestCursorFollowsTheScreen: wherever the tracker says it knows the
// cursor, a saved cursor or the tab stops, the screen that renders a
// SNAPSHOT has them there.
func TestCursorFollowsTheScreen(t *testing.T) {
	const cols, rows = 40, 12
	r := rand.New(rand.NewPCG(7, 11))
	known := 0
	for i := 0; i < 3000; i++ {
		sc := screen.New(cols, rows, screen.Options{})
		tr := New(cols, rows, 0)
		var stream strings.Builder
		for n := 1 + r.IntN(30); n > 0; n-- {
			f := cursorFrags[r.IntN(len(cursorFrags))]
			stream.WriteString(f)
			// Fed in two pieces, so that sequences are cut too.
			k := r.IntN(len(f) + 1)
			sc.Write([]byte(f))
			tr.Write([]byte(f[:k]))
			tr.Write([]byte(f[k:]))
			st := tr.State()
			if row, col, ok := st.Cursor(); ok {
				known++
				srow, scol := sc.Cursor()
				if srow != row || scol != col || sc.PendingWrap() {
					t.Fatalf("stream %q: tracker's cursor %d,%d, the screen's %d,%d (wrap pending %v)", stream.String(), row, col, srow, scol, sc.PendingWrap())
				}
			} else if row, ok := st.CursorRow(); ok {
				if srow, _ := sc.Cursor(); srow != row {
					t.Fatalf("stream %q: tracker's row %d, the screen's %d", stream.String(), row, srow)
				}
			}
			if st.Cur&curMax != 0 {
				if _, scol := sc.Cursor(); scol > int(st.Col) {
					t.Fatalf("stream %q: the column's bound %d, the screen's column %d", stream.String(), st.Col, scol)
				}
			}
			for i, alt := range []bool{false, true} {
				if sv := st.Saved[i]; sv.Valid && sv.At {
					row, col, ok := sc.SavedCursor(alt)
					if !ok || row != int(sv.Row) || col != int(sv.Col) {
						t.Fatalf("stream %q: saved cursor %d (alt %v) at %d,%d, the screen's %d,%d %v", stream.String(), i, alt, sv.Row, sv.Col, row, col, ok)
					}
				}
			}
			if stops, ok := st.TabStops(); ok && !slices.Equal(stops, sc.TabStops()) {
				t.Fatalf("stream %q: tab stops %v, the screen's %v", stream.String(), stops, sc.TabStops())
			}
		}
	}
	if known < 10000 {
		t.Fatalf("the cursor was known only %d times", known)
	}
}
