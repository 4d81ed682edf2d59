//go:build unix

package persist

import (
	"encoding/binary"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// Viewers: connections that receive a terminal's output without holding
// it (ATTACH with "mode":"view"). Each has its own offset and credit and
// its own goroutine, which writes the journal's bytes without t.mu and
// without a copy: the chunks they are in are lent (journal.lend), not
// pinned, so they may fall out of the journal meanwhile, only their
// storage is not reused until the write returns. So a viewer never counts
// in what may be evicted, and never makes the reader, the pump or the
// holder wait for its connection: a viewer that is slow, stuck or out of credit only
// falls behind, and when the bytes it was to get next have left the
// journal it is skipped forward to a SNAPSHOT that says how many it lost.

// viewerNumbers numbers viewers across the process: a holder hands a
// terminal over by that number, so it must not be reused while it may
// still be listed. Nothing else shares it.
var viewerNumbers atomic.Uint64

const (
	// viewerSnapshotLines and viewerSnapshotMax bound the tail a
	// viewer's SNAPSHOT is rendered from: it is copied under t.mu (a
	// viewer pins nothing), so it is kept small, a screen and some
	// scrollback, at most 1 MiB, about 100 µs of copying.
	viewerSnapshotLines = 1000
	viewerSnapshotMax   = 1 << 20

	// viewerBatch bounds the output a viewer's goroutine writes at a
	// time, as consecutive OUTPUT frames in one write: a viewer behind
	// a flood catches up with one system call (and one wake-up of its
	// host) per batch instead of per frame. It is also how much journal
	// storage one viewer may hold lent (see lend).
	viewerBatch = 1 << 20
	// viewerRestFrom and viewerRest: once a viewer was sent
	// viewerRestFrom bytes without going idle in between (the terminal
	// floods), it waits up to viewerRest after each batch, not woken by
	// new output, before it writes again, so that a flood reaches each
	// viewer in a few large writes rather than one per PTY read, each a
	// wake-up of the viewer's goroutine and its host taking CPU from the
	// holder's way. Output that stops before that (a keystroke's echo, a
	// prompt, a screen's redraw) rests nothing: the next output of an
	// interactive terminal goes out at once.
	viewerRestFrom = 64 << 10
	viewerRest     = 8 * time.Millisecond
	// viewerGather ends a rest early: as much as its host's pipe holds
	// (256 KiB, cmd/ptyplex-sidecar/pipe_linux.go) is waiting for it.
	viewerGather = 256 << 10
)

// viewer is one viewing connection of a terminal. Its fields are guarded
// by the terminal's mu, but for wake and done.
type viewer struct {
	t      *term
	c      *conn
	id     uint64
	sent   uint64        // the offset of the next byte to send it
	asked  uint64        // the offset its ATTACH asked for
	credit engine.Credit // what it may still be sent
	// lost counts the bytes it was skipped past since it attached, and
	// those it can no longer get: they left the journal before it was
	// sent them (noteLossLocked counts them as they leave). owed is the
	// part of lost its next SNAPSHOT is still to report.
	lost, owed uint64
	// final is its last SNAPSHOT, copied from the journal of its
	// terminal, gone, as that journal was freed (finishViewersLocked).
	final *snapshotTail
	// greeted says its ATTACHED was written (the goroutine's first frame).
	greeted bool
	// idle says its goroutine waits on wake; starved that it waits for
	// credit, so new output alone does not wake it.
	idle, starved bool
	// resting says its goroutine waits out viewerRest after a large
	// batch: new output does not end that wait, a change of its state
	// (credit, removal, the terminal's end) does.
	resting bool
	// removed says it is no longer a viewer; bye is the reason of the
	// DETACHED its goroutine writes then ("" for none: the connection
	// went away, took the terminal over or was handed it).
	removed bool
	bye     string
	writing bool          // its goroutine is writing a frame, without t.mu
	wake    chan struct{} // capacity 1: something changed
	done    chan struct{} // closed when its goroutine ended
}

// viewerSet is a terminal's viewers. draining holds the viewers removed
// while their goroutine may still be writing to their connection:
// nothing else may write to that connection about this terminal until
// it has finished (the pump, for a viewer that became the holder; a new
// viewer of the same connection), so that frames keep their order.
type viewerSet struct {
	list     []*viewer
	draining map[*conn]*viewer
	// gated counts goroutines waiting on t.cond for a connection to be
	// free of earlier frames (viewer.waitTurnLocked).
	gated int
}

func (vs *viewerSet) find(c *conn) *viewer {
	for _, v := range vs.list {
		if v.c == c {
			return v
		}
	}
	return nil
}

// wakeLocked tells the viewers waiting for output that there is more
// (end is the journal's end now); those waiting for credit are left
// alone, and a resting one only once a batch's worth gathered for it.
func (vs *viewerSet) wakeLocked(end uint64) {
	for _, v := range vs.list {
		if v.idle && !v.starved && (!v.resting || end-v.sent >= viewerGather) {
			v.poke()
		}
	}
}

// noteLossLocked counts, for every viewer, the bytes that left the
// journal before it was sent them: the journal's start has just moved.
// A viewer out of credit hears of them only at its next CREDIT (its
// SNAPSHOT then says how many), but they are lost from now on, and
// LIST says so meanwhile.
func (vs *viewerSet) noteLossLocked(start uint64) {
	for _, v := range vs.list {
		v.noteLossLocked(start)
	}
}

// noteLossLocked counts what v lost of the journal that now starts at
// start, once: what is owed already is not counted again.
func (v *viewer) noteLossLocked(start uint64) {
	if v.sent >= start {
		return
	}
	if behind := start - v.sent; behind > v.owed {
		v.lost += behind - v.owed
		v.owed = behind
	}
}

// wakeAllLocked tells every viewer that the terminal changed (exited,
// dropped).
func (vs *viewerSet) wakeAllLocked() {
	for _, v := range vs.list {
		v.poke()
	}
}

func (v *viewer) poke() {
	v.idle, v.resting = false, false
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// removeLocked ends c's view of t, if it has one: its goroutine writes
// DETACHED with bye after the frame it may be writing ("" for none).
func (t *term) removeViewerLocked(c *conn, bye string) bool {
	vs := &t.views
	for i, v := range vs.list {
		if v.c != c {
			continue
		}
		vs.list = append(vs.list[:i], vs.list[i+1:]...)
		v.removed, v.bye = true, bye
		if vs.draining == nil {
			vs.draining = map[*conn]*viewer{}
		}
		vs.draining[c] = v
		v.poke()
		return true
	}
	return false
}

// connBusyLocked reports whether a frame about t may still be on its way
// to c from elsewhere than the caller: a removed viewer's goroutine, or
// the pump (a frame in flight, or queued control frames).
func (t *term) connBusyLocked(c *conn, pump bool) bool {
	if t.views.draining[c] != nil {
		return true
	}
	if pump {
		return false
	}
	if t.writingTo == c {
		return true
	}
	for _, f := range t.ctl {
		if f.to == c {
			return true
		}
	}
	return false
}

// pumpGatedLocked reports whether the pump's next frame goes to a
// connection a removed viewer may still be writing to (it took the
// terminal over, or was handed it): it waits for that write.
func (t *term) pumpGatedLocked() bool {
	if len(t.views.draining) == 0 {
		return false
	}
	to := t.holder
	if len(t.ctl) > 0 {
		to = t.ctl[0].to
	}
	return to != nil && t.views.draining[to] != nil
}

// signalGateLocked wakes the goroutines that wait for a connection to be
// free (see connBusyLocked), if any do.
func (t *term) signalGateLocked() {
	if t.views.gated > 0 {
		t.broadcastLocked()
	}
}

// attachView handles ATTACH with "mode":"view": c becomes one more
// viewer of the terminal (again, from the new offset, if it was one).
func (s *Server) attachView(c *conn, a proto.Attach) {
	id := a.TerminalID
	t := s.lookup(id)
	if t == nil {
		c.errorf(id, "ATTACH refused: no terminal %q on this server", id)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.life == engine.Gone:
		c.errorf(id, "ATTACH refused: no terminal %q on this server", id)
		return
	case a.Offset > t.j.end:
		c.errorf(id, "ATTACH refused: offset %d is past the %d bytes terminal %q has produced", a.Offset, t.j.end, id)
		return
	case t.holder == c:
		c.errorf(id, `ATTACH refused: this connection holds terminal %q; to view it, DETACH it first (or hand it to a viewer with DETACH "to")`, id)
		return
	}
	t.removeViewerLocked(c, "")
	v := &viewer{t: t, c: c, id: viewerNumbers.Add(1), sent: a.Offset, asked: a.Offset,
		credit: engine.NewCredit(a.Credit), wake: make(chan struct{}, 1), done: make(chan struct{})}
	t.views.list = append(t.views.list, v)
	go v.run()
}

// detachViewer handles DETACH from a connection that does not hold the
// terminal: a viewer's view ends. It reports whether c was one.
func (t *term) detachViewerLocked(c *conn) bool {
	return t.removeViewerLocked(c, "detached as asked")
}

// handOver handles DETACH "to": the holder c gives the terminal to its
// viewer number to, which carries on from its own offset and credit as
// the holder; c gets DETACHED, the viewer an ATTACHED with mode "hold".
func (s *Server) handOver(c *conn, id string, to uint64) {
	t := s.lookup(id)
	if t == nil {
		c.errorf(id, "DETACH refused: no terminal %q on this server", id)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holder != c {
		c.errorf(id, "DETACH refused: terminal %q is not attached to this connection: only its holder hands it over", id)
		return
	}
	var v *viewer
	for _, w := range t.views.list {
		if w.id == to {
			v = w
		}
	}
	if v == nil {
		c.errorf(id, "DETACH refused: terminal %q has no viewer %d", id, to)
		return
	}
	if !v.greeted {
		// Its ATTACHED is not written yet: the handover would overtake it.
		c.errorf(id, "DETACH refused: viewer %d of terminal %q is not attached yet; try again", to, id)
		return
	}
	sent, credit := v.sent, v.credit
	t.removeViewerLocked(v.c, "")
	t.queueCtlLocked(c, proto.TypeDetached, proto.Detached{TerminalID: id, Reason: "handed over to viewer " + uitoa(to)})
	t.watchTakeover(c, afterHandOver)
	gen := t.holdLocked(v.c, credit, false)
	var lost uint64
	if sent < t.j.start {
		lost = t.j.start - sent
	}
	t.queueCtlLocked(v.c, proto.TypeAttached, proto.Attached{TerminalID: id, Offset: sent, Lost: lost, Mode: proto.AttachHold, CrashLost: t.crashLostLocked(), HoldGen: gen})
	t.sent = sent
	if lost > 0 {
		t.ctl = append(t.ctl, t.snapshotCtlLocked(v.c))
		t.sent = t.j.end
	}
	t.acked = t.sent
	t.broadcastLocked()
}

// creditViewerLocked grants a viewer's CREDIT; from a connection that
// neither holds nor views the terminal it is dropped, as a CREDIT that
// crossed a takeover is.
func (t *term) creditViewerLocked(c *conn, n uint64) {
	if v := t.views.find(c); v != nil && v.credit.Limited() {
		v.credit.Grant(n)
		v.starved = false
		v.poke()
	}
}

// listedViewersLocked describes the viewers for LISTED.
func (t *term) listedViewersLocked() []proto.ListedViewer {
	if len(t.views.list) == 0 {
		return nil
	}
	out := make([]proto.ListedViewer, 0, len(t.views.list))
	for _, v := range t.views.list {
		out = append(out, proto.ListedViewer{Viewer: v.id, Sent: v.sent, Lost: v.lost})
	}
	return out
}

// run is the viewer's goroutine: ATTACHED, then OUTPUT from its offset
// within its credit, a SNAPSHOT wherever it fell out of the journal, and
// EXIT at the end; DETACHED if its view is ended while the connection
// lasts. It holds t.mu only to decide and to copy, never while writing.
func (v *viewer) run() {
	t := v.t
	// The OUTPUT headers of a batch, one per frame, written once; only
	// their lengths change.
	hsize := proto.DataHeaderSize(len(t.id))
	room := uint64(engine.OutputRoom(hsize))
	maxFrames := int((viewerBatch + room - 1) / room)
	hdrs := make([]byte, maxFrames*hsize)
	for i := range maxFrames {
		proto.PutDataHeader(hdrs[i*hsize:(i+1)*hsize], proto.TypeOutput, t.id)
	}
	var lent [][]byte // the journal chunks the batch being written reads
	var rest *time.Timer
	streak := 0 // OUTPUT bytes written since the viewer was last idle
	t.mu.Lock()
	v.waitTurnLocked()
	for {
		var frames [][]byte
		var snap *snapshotTail
		last := false
		batch := 0 // OUTPUT bytes in this write
		switch {
		case v.removed:
			if v.bye != "" {
				frames = append(frames, checkedFrame(t.id, proto.TypeDetached, proto.Detached{TerminalID: t.id, Reason: v.bye}))
			}
			last = true
		case !v.greeted || v.final != nil || v.sent < t.j.start || v.cutOffLocked():
			var lost uint64
			switch {
			case v.final != nil:
				snap, v.final = v.final, nil
				lost = snap.lost
			case v.sent < t.j.start || v.cutOffLocked():
				v.noteLossLocked(t.j.start)
				lost, v.owed = v.owed, 0
				st := t.viewerTailLocked(lost)
				snap = &st
			}
			if !v.greeted {
				v.greeted = true
				frames = append(frames, checkedFrame(t.id, proto.TypeAttached, proto.Attached{TerminalID: t.id,
					Offset: v.asked, Lost: lost, Mode: proto.AttachView, Viewer: v.id, CrashLost: t.crashLostLocked()}))
			}
			if snap != nil {
				v.sent = snap.offset
			}
		case v.sent < t.j.end && v.credit.Allow(1) > 0:
			// The journal's own bytes, written without a copy and
			// without the lock: lent, not pinned, so they may fall
			// out meanwhile but their storage stays put. As many
			// frames as the credit and the batch allow, in one write.
			for i := 0; i < maxFrames && v.sent < t.j.end && v.credit.Allow(1) > 0; i++ {
				n := v.credit.Allow(int(min(room, t.j.end-v.sent)))
				hdr := hdrs[i*hsize : (i+1)*hsize]
				binary.LittleEndian.PutUint32(hdr, uint32(hsize+n-4))
				frames, lent = t.j.lend(append(frames, hdr), lent, v.sent, n)
				v.sent += uint64(n)
				v.credit.Take(n)
				batch += n
			}
		case t.exitedLocked() && v.sent == t.j.end && (t.readEnded || t.life == engine.Gone):
			// Reaped and read to the end (a reader waiting for the
			// holder to make room may still add to it after the reap).
			frames = append(frames, proto.AppendFrame(nil, proto.TypeExit, proto.Marshal(t.exit)))
			t.removeViewerLocked(v.c, "")
			last = true
		default:
			v.idle, v.starved = true, v.sent < t.j.end
			streak = 0
			t.mu.Unlock()
			<-v.wake
			t.mu.Lock()
			continue
		}
		v.writing = true
		t.mu.Unlock()
		if snap != nil {
			frames = append(frames, snap.frame())
		}
		v.c.write(frames...)
		t.mu.Lock()
		v.writing = false
		if len(lent) > 0 {
			t.j.giveBack(lent)
			clear(lent)
			lent = lent[:0]
		}
		if last || v.c.isBroken() {
			break
		}
		streak += batch
		if streak >= viewerRestFrom && batch > 0 && batch < viewerBatch && t.j.end-v.sent < viewerGather && !v.removed {
			// A flood the viewer keeps up with: let more of it
			// gather (one that is a batch or a pipe's worth behind
			// writes on at once).
			v.idle, v.resting, v.starved = true, true, false
			t.mu.Unlock()
			if rest == nil {
				rest = time.NewTimer(viewerRest)
			} else {
				rest.Reset(viewerRest)
			}
			select {
			case <-rest.C:
			case <-v.wake:
				rest.Stop()
			}
			t.mu.Lock()
			v.idle, v.resting = false, false
		}
	}
	if !v.removed {
		t.removeViewerLocked(v.c, "")
	}
	if t.views.draining[v.c] == v {
		delete(t.views.draining, v.c)
	}
	close(v.done)
	t.broadcastLocked() // the pump or a new viewer of v.c may wait for it
	t.mu.Unlock()
}

// cutOffLocked reports whether v is behind the end of a terminal that
// is gone (dropped at --keep-exited, replaced by REVIVE or a re-adopting
// OPEN, the server stopping) and may not be sent the rest now: its id
// names another terminal or none, so no CREDIT of v's reaches it any
// more. It is skipped to the end at once instead: a SNAPSHOT of the
// last screen, then the EXIT. (Once the pump frees the journal, the
// viewers behind have their SNAPSHOT copied already: finishViewersLocked.)
func (v *viewer) cutOffLocked() bool {
	t := v.t
	return t.life == engine.Gone && t.readEnded && v.sent < t.j.end && v.credit.Allow(1) == 0
}

// finishViewersLocked gives every viewer behind the journal's end its
// last SNAPSHOT, copied now (at most viewerSnapshotMax each), to be
// written by its goroutine: t is gone and its journal is about to be
// freed, and a viewer may not be sent the rest any more (cutOffLocked),
// nor hold the journal while its host does not read.
func (t *term) finishViewersLocked() {
	for _, v := range t.views.list {
		if v.sent >= t.j.end || v.final != nil {
			continue
		}
		v.noteLossLocked(t.j.start)
		st := t.viewerTailLocked(v.owed)
		v.final, v.owed = &st, 0
		v.poke()
	}
}

// waitTurnLocked waits until nothing else may still write about t to the
// viewer's connection: a previous view of it, or the pump (the
// connection held the terminal until just now).
func (v *viewer) waitTurnLocked() {
	t := v.t
	for !v.removed && t.connBusyLocked(v.c, false) {
		t.views.gated++
		t.cond.Wait()
		t.views.gated--
	}
}

// viewerTailLocked copies the tail a viewer's SNAPSHOT is rendered from
// (a viewer pins nothing in the journal); lost goes in the SNAPSHOT.
func (t *term) viewerTailLocked(lost uint64) snapshotTail {
	cols, rows := int(t.cols), int(t.rows)
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	from := max(t.j.tailStart(rows+viewerSnapshotLines, viewerSnapshotMax), t.j.start)
	from, shown, prime := t.snapshotPlanLocked(from, rows, viewerSnapshotMax) // modes.go
	tail := t.j.copyFrom(from)
	return snapshotTail{id: t.id, offset: t.j.end, cols: cols, rows: rows, from: from, size: len(tail), skip: int(shown - from),
		tail: [][]byte{tail}, lost: lost, prime: prime, final: t.vt.State()}
}

// loan is a journal chunk lent to viewers' writes: how many, and whether
// it fell out of the journal meanwhile (then the last to give it back
// releases it).
type loan struct {
	n       int
	evicted bool
}

// lend appends to dst the journal's own storage of the n bytes from off
// (as appendSlices) and to chunks the chunks they are in, each lent until
// giveBack: a lent chunk may fall out of the journal (a viewer holds
// nothing back), but its storage is not reused while the write that
// reads it is under way. Called with the terminal's lock held.
func (j *journal) lend(dst, chunks [][]byte, off uint64, n int) ([][]byte, [][]byte) {
	if n <= 0 {
		return dst, chunks
	}
	if j.lent == nil {
		j.lent = map[*byte]*loan{}
	}
	ci, i := j.locate(off)
	for ; n > 0; ci, i = ci+1, 0 {
		c := j.chunks[ci]
		b := c[i:min(len(c), i+n)]
		dst = append(dst, b)
		chunks = append(chunks, c)
		l := j.lent[&c[0]]
		if l == nil {
			l = &loan{}
			j.lent[&c[0]] = l
		}
		l.n++
		n -= len(b)
	}
	return dst, chunks
}

// giveBack ends the loans of chunks; those that fell out of the journal
// meanwhile are released now. Called with the terminal's lock held.
func (j *journal) giveBack(chunks [][]byte) {
	for _, c := range chunks {
		l := j.lent[&c[0]]
		if l.n--; l.n > 0 {
			continue
		}
		delete(j.lent, &c[0])
		if l.evicted {
			j.release(c)
		}
	}
}

// keptForLoan reports whether chunk c, falling out of the journal, is
// lent: it is then released by the last giveBack instead.
func (j *journal) keptForLoan(c []byte) bool {
	if l := j.lent[&c[0]]; l != nil {
		l.evicted = true
		return true
	}
	return false
}

// isBroken reports whether a write to c failed: nothing more reaches it.
func (c *conn) isBroken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

func uitoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}
