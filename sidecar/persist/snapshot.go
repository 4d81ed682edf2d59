//go:build unix

package persist

import (
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
)

// A SNAPSHOT is a repaint of what the journal still holds: the scrollback
// lines it produced, then the screen, then the cursor. It is rendered on
// demand, only for an ATTACH that lost bytes, by feeding the journal's
// tail into a fresh screen: that costs one parse of the tail and nothing
// while output flows, where a screen kept up to date per terminal would
// cost a parse of every byte and its memory all the time. The price is
// that the screen starts blank at the tail's first byte, so state set
// before it (colours, modes, the alternate screen) may be missing from
// the repaint.
//
// Only the tail that the screen and its scrollback can show is copied,
// under the terminal's lock; the parse and the rendering run in the pump,
// without it, so that LIST, an ATTACH or the reader never wait for them.
const (
	// snapshotScrollback is the scrollback of the screen a snapshot is
	// rendered on (the screen package's default).
	snapshotScrollback = 10000
	// snapshotMaxInput bounds the tail copied for a snapshot, however
	// few newlines it holds: a frame's worth, since a repaint is rarely
	// smaller than what it repaints, and one that does not fit a frame
	// loses its oldest lines anyway.
	snapshotMaxInput = proto.MaxFrame
)

// snapshotTail is what a snapshot is rendered from: a copy of the
// journal's tail and the size of the screen, taken under the lock.
type snapshotTail struct {
	id         string
	offset     uint64 // the offset the repaint stands for: the journal's end
	cols, rows int
	tail       []byte
}

// snapshotTailLocked copies what a snapshot needs from t.
func (t *term) snapshotTailLocked() snapshotTail {
	cols, rows := int(t.cols), int(t.rows)
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	from := t.j.tailStart(rows+snapshotScrollback, snapshotMaxInput)
	return snapshotTail{id: t.id, offset: t.j.end, cols: cols, rows: rows, tail: t.j.copyFrom(from)}
}

// testHookSnapshot, if set, is called as a snapshot's rendering begins.
var testHookSnapshot func()

// frame renders the snapshot and returns its SNAPSHOT frame. Scrollback
// lines are left out, oldest first, until the frame fits the protocol's
// limit; the screen always fits (its lines are a few KiB at most).
func (st snapshotTail) frame() []byte {
	if testHookSnapshot != nil {
		testHookSnapshot()
	}
	sc := screen.New(st.cols, st.rows, screen.Options{Scrollback: snapshotScrollback})
	sc.Write(st.tail)
	st.tail = nil
	// Every line and its JSON size (as a string's contents, escaped),
	// oldest scrollback line first.
	var lines []string
	for n := sc.ScrollbackLen(); n >= 1; n-- {
		lines = append(lines, sc.Line(-n, true))
	}
	scrollback := len(lines)
	for n := 1; n <= st.rows; n++ {
		lines = append(lines, sc.Line(n, true))
	}
	row, col := sc.Cursor()
	// Reset attributes, home the cursor and clear: the repaint draws on
	// whatever the host's emulator shows.
	const head = "\x1b[0m\x1b[H\x1b[2J"
	cursor := "\x1b[" + strconv.Itoa(row+1) + ";" + strconv.Itoa(col+1) + "H"
	empty := proto.Marshal(proto.Snapshot{TerminalID: st.id, Offset: st.offset, Cols: uint16(st.cols), Rows: uint16(st.rows),
		Data: head + cursor})
	size := 1 + len(empty)
	sizes := make([]int, len(lines))
	for i, l := range lines {
		sizes[i] = jsonSize(l) + jsonSize("\r\n")
		size += sizes[i]
	}
	drop := 0
	for size > proto.MaxFrame && drop < scrollback {
		size -= sizes[drop]
		drop++
	}
	var b strings.Builder
	b.WriteString(head)
	for i, l := range lines[drop:] {
		b.WriteString(l)
		if drop+i < len(lines)-1 {
			b.WriteString("\r\n")
		}
	}
	b.WriteString(cursor)
	return checkedFrame(st.id, proto.TypeSnapshot, proto.Snapshot{TerminalID: st.id, Offset: st.offset,
		Cols: uint16(st.cols), Rows: uint16(st.rows), Data: b.String()})
}

// jsonSize is how many bytes s takes inside a JSON string.
func jsonSize(s string) int {
	return len(proto.Marshal(s)) - 2
}

// checkedFrame is the frame of type typ with v's JSON as its body, or,
// if that would be larger than the protocol allows (a host would take
// the stream for corrupt and lose every terminal on it), an ERROR that
// says so about terminal id.
func checkedFrame(id string, typ proto.Type, v any) []byte {
	body := proto.Marshal(v)
	if 1+len(body) > proto.MaxFrame {
		body = proto.Marshal(proto.Error{TerminalID: id, Message: typ.String() + " of " + strconv.Itoa(len(body)) +
			" bytes not sent: frames are limited to " + strconv.Itoa(proto.MaxFrame) + " bytes"})
		typ = proto.TypeError
	}
	return proto.AppendFrame(nil, typ, body)
}
