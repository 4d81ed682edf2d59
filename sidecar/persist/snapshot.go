//go:build unix

package persist

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/vtstate"
)

// A SNAPSHOT is a repaint of what the journal still holds and of every
// mode the terminal is in: the scrollback lines it produced, the main
// screen, the alternate screen if it is shown, then the modes, the
// cursor and the pen. It is rendered on demand, only for an ATTACH that
// lost bytes, by feeding the journal's tail into a fresh screen: that
// costs one parse of the tail and nothing while output flows, where a
// screen kept up to date per terminal would cost a parse of every byte
// and its memory all the time. What the tail alone would lose, the
// modes set before it, comes from the terminal's mode tracker (modes.go):
// the screen is primed with the state at the tail's first byte (a
// checkpoint of the tracker), and the repaint ends with the state at its
// last. The cells drawn before the tail are the one thing missing.
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

// snapshotTail is what a snapshot is rendered from: the journal's tail,
// as the journal's own slices, and the size of the screen, taken under
// the lock. The tail is pinned (term.snapPins) from then until the pump
// has rendered it, so that nothing evicts it meanwhile: copying it would
// cost as much memory again as the frame.
type snapshotTail struct {
	id         string
	offset     uint64 // the offset the repaint stands for: the journal's end
	cols, rows int
	from       uint64   // the tail's first byte, pinned
	tail       [][]byte // the journal's bytes from from to offset
	size       int      // their length
	// skip is how many of the tail's first bytes only bring the screen
	// to its state where the lines shown begin (snapshotPlanLocked's
	// shown): parsed, and what they scroll off dropped, not rendered.
	skip int
	lost uint64 // for a viewer: the bytes it was skipped past (its SNAPSHOT says so)
	// hostCols, if more than cols, is the width of the emulator the
	// repaint is drawn on: a re-adopting OPEN's, applied to the
	// terminal as a RESIZE after the rendering (appendTabs).
	hostCols int
	// prime, if set, is the state at from, set on the screen before the
	// tail; final is the state at offset, restored after the content.
	prime *vtstate.State
	final vtstate.State
}

// snapshotTailLocked pins what a snapshot needs of t and describes it;
// the pump unpins it once the snapshot is rendered (release).
func (t *term) snapshotTailLocked() snapshotTail {
	cols, rows := int(t.cols), int(t.rows)
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	from := max(t.j.tailStart(rows+snapshotScrollback, snapshotMaxInput), t.j.start)
	from, shown, prime := t.snapshotPlanLocked(from, rows, snapshotMaxInput)
	size := int(t.j.end - from)
	t.snapPins = append(t.snapPins, from)
	return snapshotTail{id: t.id, offset: t.j.end, cols: cols, rows: rows, from: from, size: size, skip: int(shown - from),
		tail: t.j.appendSlices(nil, from, size), prime: prime, final: t.vt.State()}
}

// snapshotCtlLocked is the control frame of a SNAPSHOT for c: rendered
// by the pump without t.mu, and its tail unpinned after.
func (t *term) snapshotCtlLocked(c *conn) ctlFrame {
	st := t.snapshotTailLocked()
	return ctlFrame{to: c, render: st.frame, release: func() { t.unpinLocked(st.from) }}
}

// unpinLocked drops one snapshot pin at from.
func (t *term) unpinLocked(from uint64) {
	for i, p := range t.snapPins {
		if p == from {
			t.snapPins = append(t.snapPins[:i], t.snapPins[i+1:]...)
			break
		}
	}
	if len(t.snapPins) == 0 {
		t.snapPins = nil
	}
	t.broadcastLocked() // the reader may evict again
}

// snapshotPreamble starts a repaint: the main screen shown, the default
// pen, DECSTR (so that what an emulator kept from an earlier stream,
// bracketed paste or a cursor shape, does not outlive it where the
// program left the emulator's default), the default region, origin,
// wrap, insert mode and character set (those the lines are drawn with,
// for an emulator without DECSTR), the cursor home and the screen
// cleared. Its first bytes are those of every SNAPSHOT before DECSTR
// came in.
const snapshotPreamble = "\x1b[?1049l\x1b[0m\x1b[!p\x1b[r\x1b[?6l\x1b[?69l\x1b[?7h\x1b[4l\x1b(B\x0f\x1b[H\x1b[2J"

// testHookSnapshot, if set, is called as a snapshot's rendering begins.
var testHookSnapshot func()

// snapshotRing is the scrollback of the screen a snapshot is rendered on.
// Whenever it is full, the lines it holds are rendered into the frame and
// dropped (screen.OnScrollbackFull): only this many lines exist as cells
// at any time, not the whole scrollback (at 16 bytes a cell, ten or more
// times the text).
const snapshotRing = 32

// frame renders the snapshot and returns its SNAPSHOT frame. Scrollback
// lines are left out, oldest first, until the frame fits the protocol's
// limit; the screen always fits (its lines are a few KiB at most).
//
// The lines are rendered, JSON-escaped, straight into the frame's buffer,
// sized for the tail at the start, and the lines cut are moved out of it
// at the end: while the server's heap is a large journal, the collector
// runs rarely, so everything a rendering allocates is RSS until it ends,
// and this allocates little more than the frame and the tail it came
// from.
func (st snapshotTail) frame() []byte {
	if testHookSnapshot != nil {
		testHookSnapshot()
	}
	if st.final.Rows == 0 { // a tail described without the tracker's state
		st.final = vtstate.Initial(st.cols, st.rows)
	}
	sc := screen.New(st.cols, st.rows, screen.Options{Scrollback: snapshotRing})
	if st.prime != nil {
		sc.Write(st.prime.AppendPrime(nil))
	}
	empty := proto.Marshal(proto.Snapshot{TerminalID: st.id, Offset: st.offset, Cols: uint16(st.cols), Rows: uint16(st.rows), Lost: st.lost})
	at := bytes.Index(empty, []byte(`"data":""`)) + len(`"data":"`)
	const newline = `\r\n` // "\r\n" in a JSON string
	// The frame: its length (set last), type, the JSON up to the data's
	// opening quote, then the data: the main screen, the default modes
	// and pen, the cursor home and the screen cleared (the repaint draws
	// on whatever the host's emulator shows), the lines, each followed
	// by a newline but the last, the alternate screen, the modes, the
	// cursor and the pen (appendRestore), and the rest of the JSON.
	shown := st.size - st.skip
	b := make([]byte, 0, 5+len(empty)+shown+shown/8+(st.rows+1)*st.cols)
	b = append(b, 0, 0, 0, 0, byte(proto.TypeSnapshot))
	b = append(b, empty[:at]...)
	b = appendJSONContents(b, []byte(snapshotPreamble))
	first := len(b)
	// starts is where each line begins in b, oldest scrollback line
	// first: sized once for the lines the tail can hold (a line takes a
	// byte at least; it grows past that if sequences scroll more), so
	// that a large SNAPSHOT does not leave a trail of doubled copies
	// behind; int32, since b fits a frame and the tail (a frame's worth
	// at most).
	starts := make([]int32, 0, min(shown, snapshotScrollback+snapshotRing)+st.rows+1)
	var line []byte
	// mainShown says the screen's main lines are the main screen's: set
	// once the tail is in (add draws the screen's lines after it).
	var mainShown bool
	add := func(n int) {
		starts = append(starts, int32(len(b)))
		switch {
		case n < 0:
			line = sc.AppendLine(line[:0], n, true)
		case mainShown:
			line = sc.AppendScreenLine(line[:0], false, n, true)
		default:
			line = line[:0]
		}
		b = appendJSONContents(b, line)
		b = append(b, newline...)
	}
	flush := func() {
		for n := sc.ScrollbackLen(); n >= 1; n-- {
			add(-n)
		}
		sc.DropScrollback()
	}
	// The bytes before the lines shown: what they scroll off is older
	// than the scrollback a snapshot keeps.
	skip := st.skip
	sc.OnScrollbackFull(sc.DropScrollback)
	for _, tail := range st.tail {
		if skip > 0 {
			n := min(skip, len(tail))
			sc.Write(tail[:n])
			tail, skip = tail[n:], skip-n
		}
		if skip == 0 {
			sc.DropScrollback()
			sc.OnScrollbackFull(flush)
			skip = -1
		}
		sc.Write(tail)
	}
	if skip > 0 {
		sc.DropScrollback()
	}
	flush()
	scrollback := len(starts)
	// The main screen's lines come from the screen, but when the
	// alternate screen is shown and the screen, after the tail, does
	// not show it (the tail began after the program entered it, and
	// nothing primed the screen for it): what the tail drew is then the
	// alternate screen's (appendRestore draws it there). A tail that
	// holds the entry, primed or not, leaves the screen on the
	// alternate screen with the main one's lines behind it.
	mainShown = !st.final.Alt || sc.AltScreen()
	for n := 1; n <= st.rows; n++ {
		add(n)
	}
	b = b[:len(b)-len(newline)]
	b = appendJSONContents(b, appendRestore(nil, sc, &st.final, st.rows, st.hostCols))
	b = append(b, empty[at:]...)
	// The scrollback a screen keeps, and then what fits a frame.
	drop := max(0, scrollback-snapshotScrollback)
	for len(b)-4-(int(starts[drop])-first) > proto.MaxFrame && drop < scrollback {
		drop++
	}
	if cut := int(starts[drop]) - first; cut > 0 {
		b = append(b[:first], b[first+cut:]...)
	}
	if len(b)-4 > proto.MaxFrame {
		return tooLarge(st.id, proto.TypeSnapshot, len(b)-5)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// appendJSONContents appends s to dst as the contents of a JSON string
// (escaped as encoding/json does, without the quotes).
func appendJSONContents(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
				dst = append(dst, c)
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
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
