//go:build unix

package persist

import (
	"bytes"
	"encoding/binary"
	"strconv"

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

// snapshotRing is the scrollback of the screen a snapshot is rendered on.
// The tail goes in a piece at a time (snapshotPiece), and after each the
// lines it scrolled off are taken out as text, JSON-escaped as the frame
// will carry them: only this many lines exist as cells at any time, not
// the whole scrollback (at 16 bytes a cell, ten or more times the text).
const snapshotRing = 1024

// snapshotPiece is how much of tail goes into the screen before the
// scrollback is emptied: at most half the ring's worth of newlines and a
// quarter of it of full rows of wrapped text, so that what the piece
// scrolls off fits the ring. (A sequence that scrolls by many lines at
// once, CSI n S, may push out more: those blank lines are missing from
// the repaint.)
func snapshotPiece(tail []byte, cols int) int {
	n := min(len(tail), snapshotRing/4*max(cols, 1))
	lines := 0
	for i, b := range tail[:n] {
		if b == '\n' {
			if lines++; lines == snapshotRing/2 {
				return i + 1
			}
		}
	}
	return n
}

// frame renders the snapshot and returns its SNAPSHOT frame. Scrollback
// lines are left out, oldest first, until the frame fits the protocol's
// limit; the screen always fits (its lines are a few KiB at most). The
// frame is built in one buffer of its exact size from the escaped lines:
// what a rendering holds at its peak is the tail, those lines and the
// frame.
func (st snapshotTail) frame() []byte {
	if testHookSnapshot != nil {
		testHookSnapshot()
	}
	sc := screen.New(st.cols, st.rows, screen.Options{Scrollback: snapshotRing})
	// Every line as the JSON string's contents, oldest scrollback line
	// first.
	var lines [][]byte
	for tail := st.tail; len(tail) > 0; {
		n := snapshotPiece(tail, st.cols)
		sc.Write(tail[:n])
		tail = tail[n:]
		for n := sc.ScrollbackLen(); n >= 1; n-- {
			lines = append(lines, jsonContents(sc.Line(-n, true)))
		}
		sc.DropScrollback()
	}
	if extra := len(lines) - snapshotScrollback; extra > 0 {
		clear(lines[:extra])
		lines = lines[extra:]
	}
	scrollback := len(lines)
	for n := 1; n <= st.rows; n++ {
		lines = append(lines, jsonContents(sc.Line(n, true)))
	}
	row, col := sc.Cursor()
	// Reset attributes, home the cursor and clear: the repaint draws on
	// whatever the host's emulator shows.
	head := jsonContents("\x1b[0m\x1b[H\x1b[2J")
	cursor := jsonContents("\x1b[" + strconv.Itoa(row+1) + ";" + strconv.Itoa(col+1) + "H")
	newline := jsonContents("\r\n")
	empty := proto.Marshal(proto.Snapshot{TerminalID: st.id, Offset: st.offset, Cols: uint16(st.cols), Rows: uint16(st.rows)})
	at := bytes.Index(empty, []byte(`"data":""`)) + len(`"data":"`)
	size := 1 + len(empty) + len(head) + len(cursor) + (len(lines)-1)*len(newline)
	for _, l := range lines {
		size += len(l)
	}
	drop := 0
	for size > proto.MaxFrame && drop < scrollback {
		size -= len(lines[drop]) + len(newline)
		drop++
	}
	if size > proto.MaxFrame {
		return tooLarge(st.id, proto.TypeSnapshot, size-1)
	}
	b := make([]byte, 0, 4+size)
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = append(b, byte(proto.TypeSnapshot))
	b = append(b, empty[:at]...)
	b = append(b, head...)
	for i, l := range lines[drop:] {
		b = append(b, l...)
		if drop+i < len(lines)-1 {
			b = append(b, newline...)
		}
	}
	b = append(b, cursor...)
	return append(b, empty[at:]...)
}

// jsonContents is s as the contents of a JSON string: escaped, without
// the quotes.
func jsonContents(s string) []byte {
	q := proto.Marshal(s)
	return q[1 : len(q)-1]
}

// checkedFrame is the frame of type typ with v's JSON as its body, or,
// if that would be larger than the protocol allows (a host would take
// the stream for corrupt and lose every terminal on it), an ERROR that
// says so about terminal id.
func checkedFrame(id string, typ proto.Type, v any) []byte {
	body := proto.Marshal(v)
	if 1+len(body) > proto.MaxFrame {
		return tooLarge(id, typ, len(body))
	}
	return proto.AppendFrame(nil, typ, body)
}

// tooLarge is the ERROR sent about terminal id instead of a frame of type
// typ whose body of n bytes exceeds the frame limit.
func tooLarge(id string, typ proto.Type, n int) []byte {
	return proto.AppendFrame(nil, proto.TypeError, proto.Marshal(proto.Error{TerminalID: id, Message: typ.String() + " of " +
		strconv.Itoa(n) + " bytes not sent: frames are limited to " + strconv.Itoa(proto.MaxFrame) + " bytes"}))
}
