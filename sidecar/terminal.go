package sidecar

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// terminal is one terminal from its OPEN until its id is free again. The
// dispatch loop owns the registry entry; the fields below are safe for the
// goroutines noted.
type terminal struct {
	id    string
	proc  *ptyhost.Process // set by the spawn goroutine before t leaves spawning
	gate  *engine.Gate
	input *engine.InputQueue
	sc    *Sidecar

	// Lock order: terminal.mu is taken before writer.mu and before
	// the input budget's mutex, never while either is held, and the input budget's mutex is
	// the last of all (nothing else is locked under it). No goroutine
	// holds mu while it waits for room in the writer: a host that stops
	// reading would then stall CLOSE, signals and the reap along with it.
	// Sidecar.mu is never held together with any of these.
	mu sync.Mutex
	// state is the terminal's place in its life (termState, engine.State), changed only
	// by enterLocked. Signals are sent under mu while the state says the
	// child runs, and the supervisor reaps under mu, so that no signal
	// ever reaches a pid that was reaped.
	state termState
	// deferring says the dispatch loop's actions queue in deferred rather
	// than run: from OPEN until the spawn failed or goLive applied the
	// last of them. It outlasts spawning, because the actions that waited
	// must find the terminal live when they run and still go before any
	// action that came after them.
	deferring bool
	deferred  []func() // actions that came during the spawn, in order
	// duplicates counts OPENs for this id refused while it spawned: their
	// ERRORs wait in deferred, and a failed spawn, which drops deferred,
	// sends them after its own (see answerAfterSpawn).
	duplicates int
	killTimer  *time.Timer // SIGKILL after CLOSE's grace

	// Channels, each closed once, and kept only because something waits
	// for its event:
	spawned     chan struct{} // deferring ended; act waits on it past maxDeferred
	readDone    chan struct{} // the reader saw EOF; the supervisor waits on it
	finished    chan struct{} // entered reaped; the input writer and a queueInput blocked on a full queue wait on it
	exitFlushed chan struct{} // EXIT (or the failed spawn's ERROR) was flushed; shutdown waits on it

	queued atomic.Int32 // frames of this terminal waiting in the writer
	// handing says the reader is handing frames to the writer, which
	// waits while the host does not read: the PTY is then not read on
	// purpose, as when credit runs out, so the end of the child must not
	// be taken for a PTY held open by something else (engine.Drain
	// would hang it up and lose what it still buffers).
	handing atomic.Bool
	// exitWritten says the writer has written this terminal's EXIT; only
	// the stream's holder touches it (writer.write).
	exitWritten bool
}

func newTerminal(sc *Sidecar, id string, credit *uint64) *terminal {
	return &terminal{
		id:          id,
		gate:        engine.NewGate(credit),
		input:       engine.NewInputQueue(&sc.input),
		sc:          sc,
		state:       spawning,
		deferring:   true,
		spawned:     make(chan struct{}),
		readDone:    make(chan struct{}),
		finished:    make(chan struct{}),
		exitFlushed: make(chan struct{}),
	}
}

// termState is where a terminal is in its life: the engine's lifecycle,
// shared with the persistent server (engine.State documents the moves).
// It is held in terminal.state under terminal.mu and changes only through
// enterLocked. In the plain sidecar the moves are made by: spawning ->
// live and spawning -> reaped the spawn goroutine; live -> closing the
// dispatch loop; -> reaped the supervisor; reaped -> gone the stream's
// holder, as it writes EXIT (or the failed spawn's ERROR).
type termState = engine.State

const (
	spawning = engine.Spawning
	live     = engine.Live
	closing  = engine.Closing
	reaped   = engine.Reaped
	gone     = engine.Gone
)

// canMove reports whether the lifecycle has a move from one state to the
// other (see engine.State).
func canMove(from, to termState) bool { return engine.CanMove(from, to) }

// enterLocked moves t to state to, or refuses with an error a move the
// lifecycle does not have (a second CLOSE, say). Entering reaped closes
// finished, which is the same event for a child that was reaped and for a
// spawn that failed: no process to signal, no PTY to use, no reader for
// queued input. Called with t.mu held.
func (t *terminal) enterLocked(to termState) error {
	if err := engine.Move(&t.state, to, t.id); err != nil {
		return err
	}
	if to == reaped {
		close(t.finished)
		// Nothing that waited for the spawn can still apply.
		t.stopDeferringLocked()
	}
	return nil
}

// ifLive runs fn with t.mu held if t's child runs (live or closing) and
// reports whether it did (engine.IfRunning): the supervisor reaps under
// the same lock, so no signal reaches a pid that was reaped.
func (t *terminal) ifLive(fn func()) bool { return engine.IfRunning(&t.mu, &t.state, fn) }

// directInput lets the dispatch loop write INPUT to the PTY itself from
// now on. Only once the frames that waited for the spawn are applied: a
// RESIZE sent before an INPUT must reach the PTY first.
func (t *terminal) directInput() {
	proc := t.proc
	// An error leaves the input queued: the writer goroutine's blocking
	// write then meets it and drops the rest, as for any failed write.
	t.input.SetTry(func(b []byte) int { n, _ := proc.TryWrite(b); return n })
}

// start launches the terminal's goroutines. OPENED must already be queued.
// The input writer starts only once some input has to wait for the PTY
// (see engine.InputQueue); until then it costs nothing.
func (t *terminal) start() {
	go t.readLoop()
	go t.supervise()
	t.input.EnableWriter(func() { go t.writeLoop() })
}

// readLoop moves PTY output into OUTPUT frames until the PTY reports EOF.
// Each read is sized to the remaining credit, and the bytes land directly in
// a pooled frame buffer whose header is filled in afterwards.
//
// A read that filled its frame is followed, on an open gate, by reads
// that do not wait, up to readAhead frames, before the frames are sent:
// a PTY buffers only about 19 KiB of cooked output, so a child flooding
// it stops whenever its reader does, and a reader that stopped to write
// every 64 KiB frame stopped the child once per frame; now once per
// readAhead frames. The framing is unchanged (each frame at most
// engine.OutputFrame), and output that does not fill a frame goes out at
// once as before. Measured with one cooked flood of 64 MiB against plain
// reads, interleaved, on the 2-CPU VM: medians 0.81, 0.84 and 0.84
// against 0.76, 0.78 and 0.80 reading a frame at a time (8, 10 and 10
// pairs); 16 terminals, whose reads seldom fill a frame, unchanged; the
// echo rows, idle and beside 64 floods, unchanged.
func (t *terminal) readLoop() {
	defer close(t.readDone)
	hdr := proto.DataHeaderSize(len(t.id))
	room := engine.OutputRoom(hdr)
	var batch [readAhead]outFrame
	for {
		k := 0
		var err error
		for k < len(batch) {
			if k > 0 && t.gate.Limited() {
				break // credit: one frame per grant, as before
			}
			n := t.gate.Acquire(room)
			pb := getFrameBuf(hdr + n)
			buf := (*pb)[:hdr+n]
			var got int
			if k == 0 {
				got, err = t.proc.Read(buf[hdr:])
			} else {
				// Never wait with frames in hand.
				got, err = t.proc.TryRead(buf[hdr:])
			}
			// A spilling gate (a shutdown the host did not ask for)
			// lets fewer bytes out than were read, maybe none.
			if send := t.gate.Consume(got); send > 0 {
				buf = buf[:hdr+send]
				proto.PutDataHeader(buf, proto.TypeOutput, t.id)
				batch[k] = outFrame{buf: buf, pooled: pb, term: t}
				k++
			} else {
				putFrameBuf(pb)
			}
			if err != nil || got < n {
				break // caught up with the child: out with what we have
			}
		}
		t.handing.Store(true)
		for i := 0; i < k; i++ {
			t.sc.out.send(batch[i], true)
			batch[i] = outFrame{}
		}
		t.handing.Store(false)
		if err != nil {
			return
		}
	}
}

// waitsForHost reports whether the reader does not read the PTY because
// of the host: out of credit, or handing frames to a host that does not
// read them.
func (t *terminal) waitsForHost() bool { return t.gate.Limited() || t.handing.Load() }

// writeLoop copies queued INPUT to the PTY in order until the terminal
// ends (engine.InputQueue.Drive). It runs from the first input that had
// to queue.
func (t *terminal) writeLoop() { t.input.Drive(t.proc.Write, t.finished, nil) }

// supervise waits for the child, makes sure nothing of its session
// survives, waits for the last output, reaps, and sends EXIT.
func (t *terminal) supervise() {
	defer t.stopKillTimer()
	if err := t.proc.WaitExit(); err != nil {
		t.sc.logf("terminal %q: waiting for pid %d: %v", t.id, t.proc.Pid(), err)
	}
	// The child is a zombie now, so its session id is still reserved.
	engine.Drain(t.proc, t.readDone, t.waitsForHost, t.logf)
	t.sc.unwatch(t.proc)
	// Reap under mu, in the same step as entering reaped, so that a
	// signal sent under ifLive never reaches a pid that was reaped.
	t.mu.Lock()
	st, err := t.proc.Reap()
	if serr := t.enterLocked(reaped); serr != nil {
		t.sc.logf("%v", serr)
	}
	t.mu.Unlock()
	// Input from now on has nowhere to go: refuse it here, since a writer
	// goroutine, which would otherwise do it, may never have started.
	t.input.Discard()
	t.proc.Close()

	exit := proto.Exit{TerminalID: t.id}
	if err != nil {
		t.sc.logf("terminal %q: %v", t.id, err)
	} else {
		code := st.Code
		exit.ExitCode = &code
		exit.Signal = st.SignalName()
	}
	// The id is freed as the writer takes EXIT off its queue: a host may
	// reuse it the moment it reads the EXIT, while an OPEN for it that
	// arrives earlier still finds the terminal live (and gets an ERROR).
	t.sc.out.send(t.finalFrame(controlFrame(t, proto.TypeExit, exit)), true)
}

// finalFrame makes f, EXIT or the ERROR of a failed spawn, t's last frame:
// writing it moves t to gone and frees its id, and once it is flushed
// shutdown stops waiting for t. An EXIT (whose term is t) is also marked
// last, so that the writer drops any frame of t sent after it; the ERROR
// of a spawn has no term, as it answers an OPEN as if no terminal had
// existed, and nothing else about that terminal is ever sent.
func (t *terminal) finalFrame(f outFrame) outFrame {
	f.last = f.term == t
	f.before = func() {
		t.sc.forget(t)
		t.mu.Lock()
		err := t.enterLocked(gone)
		t.mu.Unlock()
		if err != nil {
			t.sc.logf("%v", err)
		}
	}
	f.after = func() { close(t.exitFlushed) }
	return f
}

func (t *terminal) logf(format string, args ...any) {
	t.sc.logf("terminal %q: "+format, append([]any{t.id}, args...)...)
}

// close handles CLOSE: the gate lifts so the reader can drain to EOF, the
// process group gets SIGHUP, and SIGKILL follows after engine.CloseGrace. A
// second CLOSE, or one after the reap, only lifts the gate again.
func (t *terminal) close() {
	t.gate.Lift()
	t.ifLive(func() {
		if t.enterLocked(closing) != nil {
			return // closing already
		}
		t.killTimer = engine.Hangup(t.proc, t.kill)
	})
}

// kill ends every process of the terminal at once (shutdown, or the end of
// CLOSE's grace period). It changes no state: the reap that follows does.
// It leaves the credit gate alone: CLOSE lifted it already, and shutdown
// lifts or spills it as the cause of the shutdown asks (Sidecar.shutdown).
func (t *terminal) kill() {
	t.ifLive(func() {
		engine.Kill(t.proc)
	})
}

func (t *terminal) stopKillTimer() {
	t.mu.Lock()
	if t.killTimer != nil {
		t.killTimer.Stop()
	}
	t.mu.Unlock()
}

// readAhead is how many full frames a flooding terminal's reader reads
// before it sends them (see readLoop).
const readAhead = 4

// frameSize is the size of the pooled frame buffers: one OUTPUT frame
// (engine.OutputFrame).
const frameSize = engine.OutputFrame

// framePool recycles OUTPUT frame buffers: readers read straight into a
// buffer that already holds the frame header, and the writer returns it.
var framePool = sync.Pool{New: func() any {
	b := make([]byte, 0, frameSize)
	return &b
}}

func getFrameBuf(need int) *[]byte {
	p := framePool.Get().(*[]byte)
	if cap(*p) < need {
		b := make([]byte, 0, need)
		p = &b
	}
	return p
}

// putFrameBuf recycles a frame buffer; the larger ones of terminals with
// very long ids are left to the collector.
func putFrameBuf(p *[]byte) {
	if cap(*p) == frameSize {
		*p = (*p)[:0]
		framePool.Put(p)
	}
}
