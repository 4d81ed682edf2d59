//go:build unix

package persist

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/screen/vtstate"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

const (
	// readChunk is the most one PTY read takes into the journal: an
	// OUTPUT frame's worth (each frame carries engine.OutputRoom).
	readChunk = engine.OutputFrame
)

// Lock order: Server.mu before term.mu, never the other way round; no
// goroutine holds term.mu while it writes to a connection.

// term is one terminal of the server, from OPEN until its EXIT was
// delivered (or, exited while detached, until keep-exited passed). Every
// field a live upgrade would hand over is here. mu guards the fields
// below it; cond is signalled on every change the reader, the pump or
// the supervisor may wait for.
type term struct {
	id   string
	s    *Server
	proc *ptyhost.Process
	// input is what the host typed and the child has not read yet.
	input *engine.InputQueue
	pid   int
	cmd   string
	args  []string
	// launch is the rest of how the OPEN started it, which re-adoption
	// compares too (sameProgram); nil when not known (a terminal an older
	// server handed over).
	launch *launchSpec
	park   bool // detached mode "park" (else "ring")
	quota  int  // journal bytes reserved in the server's total

	readDone chan struct{} // the reader saw EOF
	reaped   chan struct{} // the child was reaped

	mu   sync.Mutex
	cond *sync.Cond
	// pumpCond is the pump's own: it waits on it alone, so that the
	// reader can write a frame itself without waking it (readLoop).
	// broadcastLocked wakes both; pumpIdle says the pump waits for work.
	pumpCond *sync.Cond
	pumpIdle bool
	// pumping says a pump goroutine runs (or was started). The pump of
	// a finished terminal (its EXIT written, nothing left to send) or of
	// a detached one with nothing queued ends, and retired says so: the
	// next change that may give it work (an ATTACH, a frame queued, the
	// terminal's removal) starts it again (broadcastLocked). So a server
	// keeps no goroutine for the terminals whose end was delivered, nor
	// for those nobody holds.
	pumping bool
	retired bool
	// exitInFlight says the pump has taken the EXIT (end is exitWritten)
	// and has not yet written it to the holder: Stop waits for it
	// (awaitExitWritten) before it closes the connections.
	exitInFlight bool
	// pumpDeferred says the pump woke while the reader was writing a
	// frame, and waits for the reader to say it is done.
	pumpDeferred bool
	j            *journal
	vt           *vtstate.Tracker // the modes of what j received (modes.go)
	holder       *conn            // the connection this terminal's frames go to; nil when detached
	// holdGen is the holder generation: given anew (Server.holdGens)
	// each time a connection becomes the holder, and kept when the
	// holder goes. holdRoot is the one given when a connection last
	// became the holder other than by a resume (holdgen.go): an ATTACH
	// with "resume": N takes the terminal back only if N >= holdRoot.
	holdGen, holdRoot uint64
	sent              uint64        // next offset to send to holder
	credit            engine.Credit // what holder may still be sent
	// pin is the first journal byte of the frame being written to the
	// holder (by the pump or the reader, see pump), straight from the
	// journal's chunks: while pinned, nothing from pin on may be
	// evicted, whatever else says it may.
	pin    uint64
	pinned bool
	// snapPins are the first bytes of the tails of the SNAPSHOTs queued
	// and not rendered yet (snapshot.go): nothing from the lowest on may
	// be evicted either.
	snapPins []uint64
	// writingTo is the connection the pump or the reader is writing a
	// frame to (or waiting in the queue of), since writeSince; nil
	// between writes. A takeover reads it to tell a previous holder that
	// stopped reading.
	writingTo  *conn
	writeSince time.Time
	// flushWaits counts goroutines waiting on cond for the frames queued
	// for a connection to be written (Server.flushControl): every write
	// then wakes them.
	flushWaits int
	writingCtl bool // what the pump is writing to writingTo is a ctl frame
	// acked is the offset up to which a host said it has the bytes: the
	// offset of its ATTACH, advanced by every CREDIT it grants after it
	// (a host grants credit for bytes it consumed). Bytes past it may
	// still sit in socket and pipe buffers, or in a host that is dying.
	acked uint64
	ctl   []ctlFrame // control frames to send, in order, before more output
	// views are the connections that view the terminal (viewers.go).
	views viewerSet
	cols  uint16
	rows  uint16
	// life is the terminal's place in its life (engine.State), changed
	// only by enterLocked; end is how far its end reached a host.
	life engine.State
	end  delivery
	exit proto.Exit // the child's end, once life is Reaped
	// keepGen counts the keep clocks started (at each detach of an
	// exited terminal, at each EXIT sent), so that only the latest
	// timer drops the terminal; keeper is that timer, stopped when a
	// later one replaces it and when the server stops (it holds the
	// terminal, its journal with it, until it fires).
	keepGen int
	keeper  *time.Timer
	killer  *time.Timer
	killAt  time.Time   // when killer fires, for a live upgrade to set it again
	keepAt  time.Time   // when the latest keep-exited or keep-finished timer fires
	orphan  orphanClock // closes it after long enough with no holder (orphan.go)
	debt    readoptDebt // a re-adopting host's repaint, outside its credit (readopt.go)

	reading   bool // readLoop is inside a PTY read
	readEnded bool // readLoop saw the end of the PTY (readDone is closed)
	// frozen stops the reader and the input writer at a point where
	// every byte is either in the journal or in input, and keeps the
	// supervisor from reaping: the state of a live upgrade (upgrade.go).
	frozen bool

	// disk is the terminal's journal on disk (--journal-dir), nil
	// without one; the reader appends to it (diskjournal.go).
	disk *diskStore
	// diskLater, for a terminal of a server with --journal-dir whose
	// journal on disk could not be made, is what to make and why it
	// could not (LIST's journalDirError).
	diskLater *diskLater
	// dead says the terminal was recovered from the journal directory
	// of a server that died: it has no child, only bytes (revive.go).
	dead bool

	// answers answers the program's queries while no host holds the
	// terminal (answers.go); the reader's, but for its own locks.
	answers answerer
}

// ctlFrame is a control frame for one connection, sent by the pump so
// that it keeps its place among the terminal's OUTPUT frames.
type ctlFrame struct {
	to  *conn
	buf []byte
	// render, if set, makes buf: the pump calls it without t.mu (a
	// SNAPSHOT, whose rendering takes long); then release, with t.mu.
	render  func() []byte
	release func()
}

func (t *term) queueCtlLocked(to *conn, typ proto.Type, v any) {
	if to == nil {
		return
	}
	t.ctl = append(t.ctl, ctlFrame{to: to, buf: checkedFrame(t.id, typ, v)})
	t.broadcastLocked()
}

func (t *term) initConds() {
	t.cond = sync.NewCond(&t.mu)
	t.pumpCond = sync.NewCond(&t.mu)
}

// broadcastLocked wakes every goroutine that waits for a change of t:
// the pump and all that wait on cond.
func (t *term) broadcastLocked() {
	t.cond.Broadcast()
	if t.retired {
		t.retired, t.pumping = false, true
		go t.runPump()
		return
	}
	t.pumpCond.Signal()
}

// start launches the reader, the supervisor and the pump.
func (t *term) start() {
	t.startInput()
	go t.readLoop()
	go t.supervise()
	go t.pump()
}

// evictableLocked is how many of the oldest journal bytes may fall out to
// make room. In ring mode: while a host holds the terminal, those sent to
// it; while none does, all of them. In park mode only those a host
// acknowledged (see acked), so that a host that dies with bytes in flight
// finds them again; a host that uses no credit cannot acknowledge, so
// for it what was sent counts (the child would stall otherwise). With
// nothing evictable the reader waits, and the child blocks in write(2).
func (t *term) evictableLocked() int {
	n := t.evictableUnpinnedLocked()
	if floor, ok := t.pinFloorLocked(); ok {
		n = min(n, int(floor-t.j.start))
	}
	return n
}

// pinFloorLocked is the lowest journal offset something still reads
// without the lock (a frame being written, a SNAPSHOT's tail), if any.
func (t *term) pinFloorLocked() (uint64, bool) {
	floor, ok := t.pin, t.pinned
	for _, p := range t.snapPins {
		if !ok || p < floor {
			floor, ok = p, true
		}
	}
	return floor, ok
}

func (t *term) evictableUnpinnedLocked() int {
	switch {
	case t.s.dropping.Load():
		return t.j.size
	case t.life == engine.Closing && t.holder == nil:
		// The host asked for the end: what nobody holds may go, so
		// that the child's last output drains and its EXIT can come.
		return t.j.size
	case t.life == engine.Closing:
		return int(t.sent - t.j.start)
	case t.park && t.ackedLocked() >= t.j.start:
		return int(t.ackedLocked() - t.j.start)
	case t.park:
		return 0
	case t.holder != nil:
		return int(t.sent - t.j.start)
	default:
		return t.j.size
	}
}

// ackedLocked is the offset up to which bytes may be dropped in park mode.
func (t *term) ackedLocked() uint64 {
	if t.holder != nil && !t.credit.Limited() {
		return t.sent
	}
	return min(t.acked, t.sent)
}

// evictStep is how much room the reader makes at a time in a full
// journal: a sixteenth of it, at most one read's worth. Reads into a full
// journal are that large at most, so a smaller step would cost reads;
// a larger one would keep fewer of the newest bytes than the journal's
// size for a detached terminal.
func (t *term) evictStep() int { return max(min(readChunk, t.j.limit/16), 64) }

// evictAmount is evictStep stretched or shrunk to the end of the oldest
// chunk when that is near (within half a step more): every eviction then
// gives a chunk back, and a full journal holds its bytes in one chunk
// more than they need, not two. For journals of 1 MiB and more, whose
// step is about a chunk, that is every time; smaller ones evict by
// step and free a chunk every few steps.
func (t *term) evictAmount() int {
	step := t.evictStep()
	if r := t.j.oldestRun(); r > 0 && r <= step+step/2 {
		return r
	}
	return step
}

// readLoop moves PTY output into the journal, reading straight into its
// free space, until the PTY reports EOF. Only this goroutine changes the
// journal's storage, so the region it reads into needs no lock.
//
// While the terminal is frozen it does not read: a freeze sets a read
// deadline in the past, a read in progress returns what it had (committed
// like any other read) or the deadline error, which only means "paused".
func (t *term) readLoop() {
	defer func() {
		t.mu.Lock()
		t.readEnded = true
		t.broadcastLocked()
		t.views.wakeAllLocked() // the EXIT may go to them now
		t.mu.Unlock()
		t.input.Discard() // input has nowhere to go now
		close(t.readDone)
	}()
	// A read takes at most one OUTPUT frame's payload: a read of
	// readChunk went out as a full frame and one of the header's few
	// bytes, two writes for one read.
	want := engine.OutputRoom(proto.DataHeaderSize(len(t.id)))
	out := newOutputFrame(t.id)
	for {
		t.mu.Lock()
		if (t.disk.healDue() || t.diskLater.due()) && !t.frozen {
			t.healDiskLocked()
		}
		var r, r2 []byte
		for {
			if t.frozen {
				t.cond.Wait()
				continue
			}
			if r, r2 = t.j.reserveSpan(want); r != nil {
				break
			}
			if n := t.evictableLocked(); n > 0 {
				t.j.evict(min(n, t.evictAmount()))
				t.views.noteLossLocked(t.j.start)
				continue
			}
			t.cond.Wait()
		}
		t.reading = true
		off, disk := t.j.end, t.disk
		t.mu.Unlock()
		n, err := t.proc.ReadSpan(r, r2)
		if n > 0 {
			// On disk before any host can be sent it (diskjournal.go):
			// a record per region the read filled, counted first.
			k := min(n, len(r))
			disk.appendRead(r[:k], r2[:n-k], off)
		}
		t.mu.Lock()
		t.reading = false
		at, detached := t.j.end, t.holder == nil
		if n > 0 {
			t.j.commitSpan(n, len(r))
			// The tracker sees both parts of a read that went on into r2.
			na := min(n, len(r))
			t.trackLocked(r[:na])
			if n > na {
				t.trackLocked(r2[:n-na])
			}
			t.views.wakeLocked(t.j.end)
		}
		// With the pump idle and nothing before them, the reader sends
		// these bytes itself, as the plain sidecar's reader does: the
		// pump is not woken, and no other thread is woken to run it
		// while this one goes back to the PTY. The pump's condition is
		// left alone for it.
		inline := n > 0 && t.inlineLocked()
		switch {
		case inline:
			t.cond.Broadcast()
			out.send(t, t.holder)
			if t.pumpDeferred {
				t.pumpDeferred = false
				t.pumpCond.Signal()
			}
		case n > 0 && t.retired && t.holder == nil && !t.frozen:
			// Nobody to send them to, and the pump ended until
			// somebody comes (runPump): it is not started for them.
			t.cond.Broadcast()
		case n > 0 || t.frozen:
			t.broadcastLocked()
		}
		t.mu.Unlock()
		if n > 0 {
			// The read may have gone on from r into r2 (ReadSpan).
			na := min(n, len(r))
			t.answers.read(t, r[:na], at, detached)
			if n > na {
				t.answers.read(t, r2[:n-na], at+uint64(na), detached)
			}
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
	}
}

// inlineLocked reports whether the reader may write the bytes it just
// read to the holder itself: the pump waits for work, nobody writes to
// the holder, no control frame waits to go before them, and the holder
// has credit for some.
func (t *term) inlineLocked() bool {
	return t.holder != nil && t.pumpIdle && t.writingTo == nil && len(t.ctl) == 0 &&
		!t.frozen && !t.pumpGatedLocked() && t.sent >= t.j.start && t.sent < t.j.end &&
		t.credit.Allow(1) > 0
}

// supervise waits for the child, ends what is left of its session, waits
// for the last output, reaps and records the exit for the pump to send.
func (t *term) supervise() {
	if err := t.proc.WaitExit(); err != nil {
		t.s.logf("terminal %q: waiting for pid %d: %v", t.id, t.pid, err)
	}
	// A reader waiting for journal room (park mode, or a holder that
	// grants no credit) is the host's choice and is waited for; the
	// child is a zombie meanwhile and holds nothing but its pid.
	engine.Drain(t.proc, t.readDone, t.waitsForRoom, t.logf)
	t.mu.Lock()
	// A frozen terminal's child is handed over unreaped: the next image
	// of this process adopts its pid and reaps it.
	for t.frozen {
		t.cond.Wait()
	}
	// Its session was killed (Drain): the watchdog has nothing to do
	// for it any more, and must not hold its pid past the reaping.
	t.s.unwatch(t.proc)
	st, err := t.proc.Reap()
	t.enterLocked(engine.Reaped)
	if t.killer != nil {
		t.killer.Stop()
	}
	t.exit = proto.Exit{TerminalID: t.id}
	if err != nil {
		t.s.logf("terminal %q: %v", t.id, err)
	} else {
		code := st.Code
		t.exit.ExitCode = &code
		t.exit.Signal = st.SignalName()
	}
	// On disk before reaped is closed: an orderly stop waits on reaped
	// and then exits, and the exit must be in meta.json by then (the
	// disk store's lock nests inside t.mu, as for a RESIZE).
	t.disk.exited(t.exit)
	close(t.reaped)
	t.views.wakeAllLocked() // they get the EXIT too
	detached := t.holder == nil
	t.broadcastLocked()
	t.mu.Unlock()
	t.proc.Close()
	if detached {
		t.s.keepExited(t)
	}
}

// waitsForRoom reports whether the reader is held back by the host (no
// room in the journal) rather than reading the PTY.
func (t *term) waitsForRoom() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.reading && !t.readEnded && !t.frozen
}

func (t *term) logf(format string, args ...any) {
	t.s.logf("terminal %q: "+format, append([]any{t.id}, args...)...)
}

// pump sends the terminal's frames: control frames in the order they were
// queued, OUTPUT from the journal to the holder within its credit, and
// EXIT once everything before it was sent. The one other sender is the
// reader, and only while the pump waits with nothing to send: then the
// reader writes the bytes it just read itself (readLoop), and the pump
// waits for that write to end before it writes anything.
func (t *term) pump() {
	t.mu.Lock()
	if t.pumping {
		t.mu.Unlock()
		return // started already (broadcastLocked)
	}
	t.pumping = true
	t.mu.Unlock()
	t.runPump()
}

// runPump is the pump's loop, for the goroutine that set pumping. It
// ends when the terminal is gone, and when it is finished with nothing
// left to send (retired; broadcastLocked starts it again).
func (t *term) runPump() {
	out := newOutputFrame(t.id)
	t.mu.Lock()
	for {
		if t.writingTo != nil {
			// The reader is writing a frame of its own (readLoop);
			// it wakes the pump when it is done.
			t.pumpDeferred = true
			t.pumpWaitLocked()
			continue
		}
		if t.pumpGatedLocked() {
			// A viewer that became the holder is finishing its
			// last write as a viewer.
			t.pumpWaitLocked()
			continue
		}
		if len(t.ctl) > 0 {
			f := t.ctl[0]
			t.ctl[0] = ctlFrame{}
			t.ctl = t.ctl[1:]
			if f.render != nil {
				t.mu.Unlock()
				f.buf = f.render()
				t.mu.Lock()
				if f.release != nil {
					f.release()
				}
			}
			t.writingCtl = true
			t.writeLocked(f.to, f.buf)
			t.writingCtl = false
			continue
		}
		h := t.holder
		if h != nil && t.sent < t.j.start {
			// Only a shutdown (dropping) evicts bytes not yet sent:
			// they are gone, and the host gets what is left.
			t.sent = t.j.start
		}
		if h != nil && t.sent < t.j.end && t.credit.Allow(1) > 0 {
			out.send(t, h)
			continue
		}
		if h != nil && t.exitedLocked() && t.end == unread && t.sent == t.j.end {
			t.end, t.exitInFlight = exitWritten, true
			buf := proto.AppendFrame(nil, proto.TypeExit, proto.Marshal(t.exit))
			t.mu.Unlock()
			// The id is free for an OPEN once EXIT is on its way, as in
			// the plain sidecar; but a host that dies before reading
			// the EXIT must still find it, so the terminal stays
			// attachable, unlisted, until keep-exited passes or the id
			// or its journal's room is wanted again.
			t.s.keepFinished(t)
			t.mu.Lock()
			t.writeLocked(h, buf)
			t.exitInFlight = false
			t.mu.Unlock()
			t.s.shrinkFinished(t)
			t.mu.Lock()
			continue
		}
		if t.life == engine.Gone && len(t.ctl) == 0 {
			if t.readEnded {
				// Nobody reads the journal any more: its chunks
				// go to other terminals' journals. A viewer still
				// behind its end gets the last screen instead.
				t.finishViewersLocked()
				t.j.free()
			}
			t.pumping = false
			t.mu.Unlock()
			return
		}
		if t.end == exitWritten && t.readEnded && len(t.ctl) == 0 && t.writingTo == nil {
			// Finished: its EXIT was written and nothing is left to
			// send. What stays of the terminal for a host that died
			// before reading it is its record and the journal's tail
			// (shrinkFinished); the pump ends until a host attaches
			// it again.
			t.pumping, t.retired, t.pumpIdle = false, true, false
			t.mu.Unlock()
			return
		}
		if h == nil && t.writingTo == nil {
			// Detached, with nothing queued: until a host attaches
			// (or a frame is queued, or the terminal ends) there is
			// nothing to send, so the pump ends meanwhile, as a
			// finished one does, and a server that keeps many
			// detached terminals keeps no goroutine and stack for
			// each of their pumps.
			t.pumping, t.retired, t.pumpIdle = false, true, false
			t.mu.Unlock()
			return
		}
		t.pumpWaitLocked()
	}
}

func (t *term) pumpWaitLocked() {
	t.pumpIdle = true
	t.pumpCond.Wait()
	t.pumpIdle = false
}

// outputFrame is an OUTPUT frame's header and the slices of a frame that
// carries the journal's own bytes: the pump's, and the reader's when it
// writes itself.
type outputFrame struct {
	hdr   []byte // written once; only its length changes
	room  uint64
	frame [][]byte
}

func newOutputFrame(id string) *outputFrame {
	hdr := make([]byte, proto.DataHeaderSize(len(id)))
	proto.PutDataHeader(hdr, proto.TypeOutput, id)
	return &outputFrame{hdr: hdr, room: uint64(engine.OutputRoom(len(hdr)))}
}

// send writes h the next frame of unsent bytes its credit allows. The
// caller holds t.mu, checked that there are some, and is the only one
// writing to the holder (see writingTo).
func (o *outputFrame) send(t *term, h *conn) {
	n := uint64(t.credit.Allow(int(min(o.room, t.j.end-t.sent))))
	// The frame is the header and the journal's own bytes, written
	// with no copy: pinned, they stay in the journal until the write
	// returns, even once sent says they may go.
	o.frame = t.j.appendSlices(append(o.frame[:0], o.hdr), t.sent, int(n))
	binary.LittleEndian.PutUint32(o.hdr, uint32(len(o.hdr)+int(n)-4))
	t.pin, t.pinned = t.sent, true
	t.sent += n
	t.credit.Take(int(n))
	t.cond.Broadcast() // the reader may evict what was sent before
	t.writeLocked(h, o.frame...)
	t.pinned = false
	clear(o.frame)
	t.cond.Broadcast() // and now what this frame held
}

// writeLocked writes a frame to c for the pump: t.mu is released while
// the write is under way, and writingTo says where it is stuck if it is.
func (t *term) writeLocked(c *conn, frame ...[]byte) {
	t.writingTo, t.writeSince = c, time.Now()
	t.mu.Unlock()
	c.write(frame...)
	t.mu.Lock()
	t.writingTo = nil
	t.signalGateLocked()
	if t.flushWaits > 0 {
		t.cond.Broadcast()
	}
}

// owesLocked says control frames queued for c are still to be written
// to it, or one is being written. (OUTPUT is not waited for: a host
// whose input ended detaches from its terminals' output at once.)
func (t *term) owesLocked(c *conn) bool {
	if t.writingTo == c && t.writingCtl {
		return true
	}
	for _, f := range t.ctl {
		if f.to == c {
			return true
		}
	}
	return false
}

// takeoverGrace is how long a previous holder has to take the frame the
// pump is writing to it when another connection takes the terminal over.
// One that does not (a hung link that is not closed) is shut down: the
// new holder would otherwise wait behind it for as long as it hangs.
const takeoverGrace = 300 * time.Millisecond

// watchTakeover shuts old down if, takeoverGrace from now, the pump is
// still writing to it what it began writing at least that long before.
// after says what made old the previous holder: another connection's
// ATTACH, or old's own DETACH (with or without "to"). A holder whose link
// hung before it let the terminal go holds the terminal's reader (or
// pump) in that write all the same, so the connection that holds the
// terminal next would wait for its ATTACHED for as long as the link
// hangs.
//
// The caller holds t.mu. A write to old already under way at the call
// that is not stuck at the check is logged: that previous holder was
// slow, not hung, and it keeps its connection (which says why a host
// that seemed hung was not shut down).
func (t *term) watchTakeover(old *conn, after string) {
	var under time.Duration // how long the write to old was under way
	if t.writingTo == old {
		under = time.Since(t.writeSince)
	}
	time.AfterFunc(takeoverGrace, func() {
		t.mu.Lock()
		writing, since := t.writingTo == old, time.Since(t.writeSince)
		t.mu.Unlock()
		switch {
		case writing && since >= takeoverGrace:
			t.logf("the previous holder took no frame for %v after %s: its connection is shut down", takeoverGrace, after)
			old.abort("it took no frame for " + takeoverGrace.String() + " after " + after)
		case under > 0:
			t.logf("the previous holder, being written a frame for %v when %s, took it within %v: its connection is kept",
				under.Round(time.Millisecond), after, takeoverGrace)
		}
	})
}

// watchDetachedLocked is watchTakeover for a terminal that c is about to
// hold (an ATTACH, a re-adopting OPEN) while nobody holds it: a holder
// that DETACHed it may still be in the write the pump or the reader began
// before, its link hung. It is watched only now, when another needs the
// terminal, not at its DETACH: a slow link that is read, with a large
// write under way, would be taken for a hung one, and a DETACH is no
// reason to end the host's connection and its other terminals.
func (t *term) watchDetachedLocked(c *conn) {
	if old := t.writingTo; t.holder == nil && old != nil && old != c {
		t.watchTakeover(old, afterDetach)
	}
}

// What watchTakeover says a previous holder did, or had done to it.
const (
	afterTakeover = "another connection took a terminal over"
	afterDetach   = "it detached a terminal"
	afterHandOver = "it handed a terminal over"
)

// writeLoop writes queued INPUT to the PTY (engine.InputQueue.Drive):
// the input that did not go out at once through the queue's direct
// write. It starts with the first input that has to wait.
func (t *term) writeLoop() {
	t.input.Drive(t.proc.Write, t.readDone, func() {
		// A freeze waits for the write in flight to end, however it
		// ended: it may have finished just before the deadline was set.
		t.mu.Lock()
		t.broadcastLocked()
		t.mu.Unlock()
	})
}

// startInput lets input reach the PTY: directly from the dispatch loop
// while nothing waits, through writeLoop otherwise.
func (t *term) startInput() {
	proc := t.proc
	t.input.SetTry(func(b []byte) int { n, _ := proc.TryWrite(b); return n })
	t.input.EnableWriter(func() { go t.writeLoop() })
}

// enterLocked moves t to state to, the lifecycle's one mover; a move
// it does not have is refused (and logged, but for a second CLOSE).
func (t *term) enterLocked(to engine.State) error {
	err := engine.Move(&t.life, to, t.id)
	if err != nil && to != engine.Closing {
		t.s.logf("%v", err)
	}
	return err
}

// exitedLocked reports whether the child was reaped (or never adopted).
func (t *term) exitedLocked() bool { return t.life == engine.Reaped || t.life == engine.Gone }

// delivery is how far a terminal's end has reached a host: the part of
// its state only the persistent server has, beside engine.State. It
// moves unread -> exitWritten when the pump writes the EXIT, and back
// when a host attaches to a finished terminal (it missed that EXIT, which
// is written again). Whether a host holds the terminal is term.holder.
type delivery uint8

const (
	// unread: no EXIT was written; the child may still run.
	unread delivery = iota
	// exitWritten: the EXIT was written to the holder. The terminal is
	// finished: unlisted, its id free, kept only for a host that died
	// before reading it.
	exitWritten
)

// awaitReaped waits until t's child was reaped, or until expired is
// closed. The reader reaps it once the PTY is drained, which it is not
// while the reader (or the pump, holding the journal full) waits for a
// write to a holder that stopped reading: such a holder, one that took
// no frame for takeoverGrace, is shut down, as after a takeover (but as
// the server's own end of it, as STOP ends every connection), so that a
// hung host does not keep the server from ending (for ever, with nothing
// else to end the connection).
func (t *term) awaitReaped(expired <-chan struct{}) {
	tick := time.NewTicker(takeoverGrace / 3)
	defer tick.Stop()
	var shut *conn
	for {
		select {
		case <-t.reaped:
			return
		case <-expired:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		stuck := t.writingTo
		if stuck != nil && time.Since(t.writeSince) < takeoverGrace {
			stuck = nil
		}
		t.mu.Unlock()
		if stuck != nil && stuck != shut && !stuck.isBroken() {
			shut = stuck
			t.logf("its holder took no frame for %v while the server stops: its connection is shut down", takeoverGrace)
			stuck.cut("the server stopped")
		}
	}
}

// stopFlushBound bounds how long Stop waits for the EXITs to reach the
// holders once the children are reaped: a host that does not read its
// connection must not hold the server's end up for long.
const stopFlushBound = 3 * time.Second

// awaitExitWritten waits until t's EXIT was written to its holder, or t
// has no holder (or one whose connection broke), or until by. Stop's
// only, so it polls rather than arm another wake-up on every change.
func (t *term) awaitExitWritten(by time.Time) {
	for {
		t.mu.Lock()
		h := t.holder
		done := h == nil || (t.end == exitWritten && !t.exitInFlight)
		t.mu.Unlock()
		if done || h.isBroken() || !time.Now().Before(by) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ifRunning runs fn under mu if the child has not been reaped
// (engine.IfRunning), so that no signal reaches a pid that may be
// someone else's by now.
func (t *term) ifRunning(fn func()) bool { return engine.IfRunning(&t.mu, &t.life, fn) }

// close handles CLOSE: SIGHUP now, SIGKILL after the grace period; the
// output still drains to the holder. A child that already exited is not
// signalled, but the credit is lifted all the same: its holder may lack
// credit for the rest of its output, and its EXIT waits behind that (the
// seed: CLOSE lifts the gate so the reader drains to the end).
func (t *term) close() {
	if t.ifRunning(t.closeLocked) {
		return
	}
	t.mu.Lock()
	if t.holder != nil && t.credit.Limited() {
		t.credit.Lift()
		t.broadcastLocked()
	}
	t.mu.Unlock()
}

// closeLocked is close with t.mu held and the child running.
func (t *term) closeLocked() {
	if t.enterLocked(engine.Closing) != nil {
		return // closing already
	}
	// As in the plain sidecar, CLOSE lifts the credit so that the
	// output drains to the end (and, in park mode, stops waiting
	// for acknowledgements: the host wants the terminal gone).
	if t.holder != nil {
		t.credit.Lift()
	}
	t.broadcastLocked()
	t.killAt = time.Now().Add(engine.CloseGrace)
	t.killer = engine.Hangup(t.proc, t.kill)
}

// kill ends every process of the terminal at once.
func (t *term) kill() {
	t.ifRunning(func() {
		engine.Kill(t.proc)
	})
}
