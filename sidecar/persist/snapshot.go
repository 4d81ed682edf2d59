//go:build unix

package persist

import (
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
)

// snapshotLocked renders what the journal still holds as a repaint: the
// scrollback lines it produced, then the screen, then the cursor. It is
// rendered on demand, only for an ATTACH that lost bytes, by feeding the
// whole journal into a fresh screen: that costs one parse of at most the
// journal's size at that moment and nothing while output flows, where a
// screen kept up to date per terminal would cost a parse of every byte
// and its memory all the time. The price is that the screen starts blank
// at the journal's oldest byte, so state set before it (colours, modes,
// the alternate screen) may be missing from the repaint.
func (t *term) snapshotLocked() proto.Snapshot {
	cols, rows := int(t.cols), int(t.rows)
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	sc := screen.New(cols, rows, screen.Options{})
	sc.Write(t.j.bytes())
	var b strings.Builder
	// Reset attributes, home the cursor and clear: the repaint draws on
	// whatever the host's emulator shows.
	b.WriteString("\x1b[0m\x1b[H\x1b[2J")
	for n := sc.ScrollbackLen(); n >= 1; n-- {
		b.WriteString(sc.Line(-n, true))
		b.WriteString("\r\n")
	}
	for n := 1; n <= rows; n++ {
		b.WriteString(sc.Line(n, true))
		if n < rows {
			b.WriteString("\r\n")
		}
	}
	row, col := sc.Cursor()
	b.WriteString("\x1b[" + strconv.Itoa(row+1) + ";" + strconv.Itoa(col+1) + "H")
	return proto.Snapshot{TerminalID: t.id, Offset: t.j.end, Cols: uint16(cols), Rows: uint16(rows), Data: b.String()}
}
