//go:build unix

package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/session/wire"
)

// Changes reads: an OUTPUT that asks for "changes" answers a token, and an
// OUTPUT with "since": token answers only what changed after that read.
// The daemon keeps, per token, what the client was given (one hash per
// screen row, not the text), so a diff costs a few bytes per row to
// remember and a reader that sends a token back gets exactly the rows its
// copy of the screen lacks.

// maxSnapshots is how many tokens a session remembers. An agent reads with
// the token of its previous read, so only the newest matter; a few more
// let two or three clients share a session without evicting each other.
const maxSnapshots = 32

// snapshot is what one read left the client knowing. It is never changed
// after it was issued.
type snapshot struct {
	seq         uint64
	cols, rows  int
	ansi        bool // the rows were given in ANSI form
	alt         bool // the alternate screen was showing
	scrolledOff int  // Screen.ScrolledOff at the time
	avail       int  // scrollback lines held at the time
	cursor      wire.Cursor
	// seen[r-1] is the hash of screen row r as the client was given it,
	// or 0 when the client was not given that row (outside the range it
	// asked for, or cut by its budget): such a row is always sent again.
	seen []uint64
}

// snapshotOverhead approximates a snapshot's fixed cost in bytes (the
// struct, its slice header and its place in the ring), for bytes().
const snapshotOverhead = 128

// readLog is a session's ring of recent snapshots. It is guarded by the
// state mutex: OUTPUT holds it from reading the screen to issuing the token.
type readLog struct {
	id    string // random per daemon: our tokens carry it, others' do not
	seed  maphash.Seed
	next  uint64      // the sequence number of the next token
	snaps []*snapshot // oldest first, at most maxSnapshots
}

func (l *readLog) init() {
	if l.id != "" {
		return
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the systems we run on; a fixed id
		// would only make other sessions' tokens harder to tell apart.
		b = [4]byte{0x70, 0x74, 0x79, 0x70}
	}
	l.id = hex.EncodeToString(b[:])
	l.seed = maphash.MakeSeed()
	l.next = 1
}

// hash is a row's fingerprint; 0 is reserved for "not given".
func (l *readLog) hash(text string) uint64 {
	l.init()
	h := maphash.String(l.seed, text)
	if h == 0 {
		h = 1
	}
	return h
}

// issue records s and returns its token.
func (l *readLog) issue(s *snapshot) string {
	l.init()
	s.seq = l.next
	l.next++
	if len(l.snaps) == maxSnapshots {
		copy(l.snaps, l.snaps[1:])
		l.snaps = l.snaps[:maxSnapshots-1]
	}
	l.snaps = append(l.snaps, s)
	return l.token(s.seq)
}

func (l *readLog) token(seq uint64) string { return l.id + "." + strconv.FormatUint(seq, 10) }

// bytes is the memory the ring holds, approximately: what bounds it is
// maxSnapshots times (overhead + 8 bytes per row), whatever the traffic.
func (l *readLog) bytes() int {
	n := 0
	for _, s := range l.snaps {
		n += snapshotOverhead + 8*cap(s.seen)
	}
	return n
}

// lookup finds the snapshot behind a token, or says why there is none. A
// token that cannot be honoured is an error, never a full read in
// disguise: the client would take every row it did not get for unchanged.
func (l *readLog) lookup(tok string) (*snapshot, error) {
	l.init()
	id, num, ok := strings.Cut(tok, ".")
	seq, err := strconv.ParseUint(num, 10, 64)
	if !ok || err != nil || seq == 0 || !isHexID(id) {
		return nil, wire.Invalidf("field 'since' is not an OUTPUT token: %q (tokens look like %q; read without 'since' to get one)", clip(tok), l.token(1))
	}
	if id != l.id {
		return nil, wire.RequestError(fmt.Sprintf("Unknown token %q: it was not issued by this session (another session's, or from before this daemon restarted); read without 'since' to get a fresh one", tok))
	}
	if seq >= l.next {
		return nil, wire.RequestError(fmt.Sprintf("Unknown token %q: this session has issued tokens up to %s only; read without 'since' to get a fresh one", tok, l.token(l.next-1)))
	}
	if len(l.snaps) == 0 || seq < l.snaps[0].seq {
		return nil, wire.RequestError(fmt.Sprintf("Expired token %q: this session keeps its last %d read tokens, the oldest now %s; read without 'since' to get a fresh one", tok, maxSnapshots, l.token(l.snaps[0].seq)))
	}
	return l.snaps[seq-l.snaps[0].seq], nil
}

func isHexID(s string) bool {
	if len(s) != 8 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// clip shortens garbage quoted back in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Redraw reasons: the answer's "changed" holds every screen row, because
// the client's copy cannot be patched row by row.
const (
	redrawResize = "resize" // the size changed (and a width change re-wraps lines)
	redrawFormat = "format" // the token was issued for the other format (ascii vs ansi)
	redrawSwitch = "screen" // the main/alternate screen switched
)

// view is the screen as one OUTPUT sees it, rendered in its format.
type view struct {
	cols, rows  int
	ansi        bool
	alt         bool
	scrolledOff int
	avail       int
	capacity    int
	cursor      wire.Cursor
	rowText     []string // screen rows 1..rows
}

// diff is what changed between a snapshot and a view.
type diff struct {
	lines    []wire.Line // new scrollback lines the client lacks, then changed rows, top to bottom
	scrolled int         // lines that scrolled into the scrollback
	lost     int         // of those, how many the scrollback no longer holds
	moves    []wire.Move // rows the client holds at another row of its copy
	cleared  bool        // the scrollback was erased (ED 3) in between
	redraw   string
	// prev[r-1] is the client's hash for what is now row r (0: unknown).
	prev []uint64
	cur  []uint64
}

// changesSince compares the client's copy (old) with the screen now. The
// client is expected to shift its copy up by scrolled rows (when there is
// no redraw), apply the moves to the shifted copy and then replace the
// rows in lines.
func (l *readLog) changesSince(old *snapshot, v *view, newScrollback func(n int) string) diff {
	d := diff{prev: make([]uint64, v.rows), cur: make([]uint64, v.rows)}
	d.scrolled = v.scrolledOff - old.scrolledOff
	switch {
	case old.cols != v.cols || old.rows != v.rows:
		d.redraw = redrawResize
	case old.ansi != v.ansi:
		d.redraw = redrawFormat
	case old.alt != v.alt || (v.alt && d.scrolled > 0):
		// Both on the alternate screen yet the main one scrolled: the
		// program left it and came back, and may have redrawn anything.
		d.redraw = redrawSwitch
	}
	for r := 1; r <= v.rows; r++ {
		d.cur[r-1] = l.hash(v.rowText[r-1])
		if d.redraw != "" {
			continue
		}
		j := r
		if !v.alt {
			j += d.scrolled
		}
		if j <= len(old.seen) {
			d.prev[r-1] = old.seen[j-1]
		}
	}
	keep := min(d.scrolled, v.avail)
	d.lost = d.scrolled - keep
	// Had nothing erased the scrollback (ED 3, which `clear` sends), it
	// would hold what it held plus what scrolled in, up to its capacity.
	// A width change re-wraps it, so only an unchanged size can tell.
	if d.redraw != redrawResize && v.avail < min(v.capacity, old.avail+d.scrolled) {
		d.cleared = true
	}
	// Scrollback line -m is the (scrolled-m+1)-th line to scroll off, and
	// the first lines to scroll off were the client's top rows: those it
	// holds already (shifting its copy up moves them into its scrollback)
	// are not sent again. That needs the client's copy to be of the main
	// screen and of this size and format.
	known := !old.alt && d.redraw != redrawResize && d.redraw != redrawFormat
	for n := -keep; n <= -1; n++ {
		text := newScrollback(n)
		if k := d.scrolled + n + 1; known && k >= 1 && k <= len(old.seen) && old.seen[k-1] == l.hash(text) {
			continue
		}
		d.lines = append(d.lines, wire.Line{N: n, Text: text})
	}
	if d.redraw == "" {
		d.moves = findMoves(d.prev, d.cur, v.rowText)
	}
	moved := make([]bool, v.rows)
	for _, m := range d.moves {
		for i := range m.Rows {
			moved[m.To+i-1] = true
		}
	}
	for r := 1; r <= v.rows; r++ {
		if !moved[r-1] && (d.prev[r-1] == 0 || d.prev[r-1] != d.cur[r-1]) {
			d.lines = append(d.lines, wire.Line{N: r, Text: v.rowText[r-1]})
		}
	}
	return d
}

// minMoveChars is the least text a run of rows must hold to be sent as a
// move rather than as text: about what naming the move costs.
const minMoveChars = 24

// maxMoveCandidates bounds the rows tried as the source of one run, so
// that a screen of identical rows costs no more than a few passes.
const maxMoveCandidates = 16

// findMoves finds the rows that changed in place but that the client holds
// elsewhere in its copy: a full-screen program deleting or inserting a
// line (vim's dd, o) or scrolling a region shifts rows without anything
// reaching the scrollback. prev is the client's copy (already shifted by
// the scroll), cur the screen now, both as row hashes. Each move is a run
// of rows to..to+rows-1 equal to the client's from..from+rows-1.
func findMoves(prev, cur []uint64, text []string) []wire.Move {
	at := make(map[uint64][]int)
	for j, h := range prev {
		if h != 0 && len(at[h]) < maxMoveCandidates {
			at[h] = append(at[h], j)
		}
	}
	differs := func(r int) bool { return prev[r] == 0 || prev[r] != cur[r] }
	var moves []wire.Move
	for r := 0; r < len(cur); {
		if !differs(r) {
			r++
			continue
		}
		best, bestLen := -1, 0
		for _, j := range at[cur[r]] {
			n := 0
			for r+n < len(cur) && j+n < len(prev) && differs(r+n) && prev[j+n] == cur[r+n] {
				n++
			}
			if n > bestLen {
				best, bestLen = j, n
			}
		}
		if bestLen == 0 {
			r++
			continue
		}
		chars := 0
		for i := range bestLen {
			chars += utf8.RuneCountInString(text[r+i])
		}
		if chars >= minMoveChars {
			moves = append(moves, wire.Move{From: best + 1, To: r + 1, Rows: bestLen})
		}
		r += bestLen
	}
	return moves
}
