package sidecar

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// Timing of a terminal's end.
const (
	// closeGrace is how long a CLOSEd terminal has between SIGHUP and SIGKILL.
	closeGrace = 3 * time.Second
	// drainBound is how long the PTY may stay open after the child exited
	// before the rest of its session is killed: long enough to read what is
	// buffered, short enough that a leftover background job cannot hold
	// the EXIT back.
	drainBound = 100 * time.Millisecond
	// holderRetry paces the kills of processes that keep an unthrottled PTY
	// open; after holderAttempts the PTY is hung up from our side.
	holderRetry    = 500 * time.Millisecond
	holderAttempts = 4
)

// terminal is one live terminal. The dispatch loop owns the registry entry;
// the fields below are safe for the goroutines noted.
type terminal struct {
	id    string
	proc  *ptyhost.Process
	gate  *ptyhost.Gate
	input *inputQueue
	sc    *Sidecar
	spawn spawnState // until the child runs (spawn.go); proc is set then

	readDone chan struct{} // closed when the reader saw EOF
	finished chan struct{} // closed when the supervisor is done (no more PTY use)
	gone     chan struct{} // closed once EXIT is written and the id is free

	queued atomic.Int32 // frames of this terminal waiting in the writer

	closeOnce sync.Once
	mu        sync.Mutex  // orders signals against the reap; guards killTimer
	killTimer *time.Timer // SIGKILL after CLOSE's grace
}

func newTerminal(sc *Sidecar, id string, proc *ptyhost.Process, credit *uint64) *terminal {
	t := &terminal{
		id:       id,
		proc:     proc,
		gate:     ptyhost.NewGate(credit),
		input:    newInputQueue(&sc.input),
		sc:       sc,
		readDone: make(chan struct{}),
		finished: make(chan struct{}),
		gone:     make(chan struct{}),
	}
	if proc != nil {
		t.directInput()
	}
	return t
}

// directInput lets the dispatch loop write INPUT to the PTY itself from
// now on. Only once the frames that waited for the spawn are applied: a
// RESIZE sent before an INPUT must reach the PTY first.
func (t *terminal) directInput() {
	proc := t.proc
	// An error leaves the input queued: the writer goroutine's blocking
	// write then meets it and drops the rest, as for any failed write.
	t.input.setTry(func(b []byte) int { n, _ := proc.TryWrite(b); return n })
}

// start launches the terminal's goroutines. OPENED must already be queued.
// The input writer starts only once some input has to wait for the PTY
// (see inputQueue.startWriter); until then it costs nothing.
func (t *terminal) start() {
	go t.readLoop()
	go t.supervise()
	t.input.enableWriter(func() { go t.writeLoop() })
}

// readLoop moves PTY output into OUTPUT frames until the PTY reports EOF.
// Each read is sized to the remaining credit, and the bytes land directly in
// a pooled frame buffer whose header is filled in afterwards.
func (t *terminal) readLoop() {
	defer close(t.readDone)
	hdr := proto.DataHeaderSize(len(t.id))
	room := readRoom(hdr)
	for {
		n := t.gate.Acquire(room)
		pb := getFrameBuf(hdr + n)
		buf := (*pb)[:hdr+n]
		got, err := t.proc.Read(buf[hdr:])
		if got > 0 {
			t.gate.Consume(got)
			buf = buf[:hdr+got]
			proto.PutDataHeader(buf, proto.TypeOutput, t.id)
			t.sc.out.send(outFrame{buf: buf, pooled: pb, term: t}, true)
		} else {
			putFrameBuf(pb)
		}
		if err != nil {
			return
		}
	}
}

// writeLoop copies queued INPUT to the PTY in order until the terminal
// ends. It runs from the first input that had to queue.
func (t *terminal) writeLoop() {
	for {
		select {
		case <-t.input.wake:
		case <-t.finished:
			t.input.discard()
			return
		}
		chunks := t.input.take()
		for _, chunk := range chunks {
			// A failed write means the PTY is gone; the supervisor
			// reports the end, the rest of the input has nowhere to go.
			t.proc.Write(chunk)
			t.input.done(len(chunk))
		}
		if len(chunks) > 0 {
			t.input.idle()
		}
	}
}

// supervise waits for the child, makes sure nothing of its session
// survives, waits for the last output, reaps, and sends EXIT.
func (t *terminal) supervise() {
	defer t.stopKillTimer()
	if err := t.proc.WaitExit(); err != nil {
		t.sc.logf("terminal %q: waiting for pid %d: %v", t.id, t.proc.Pid(), err)
	}
	// The child is a zombie now, so its session id is still reserved.
	drain := time.NewTimer(drainBound)
	select {
	case <-t.readDone:
		drain.Stop()
		// Background jobs that do not hold the PTY are still ours to end.
		t.proc.KillSession(syscall.SIGKILL, false)
	case <-drain.C:
		t.proc.KillSession(syscall.SIGKILL, true)
		t.awaitReader()
	}
	t.sc.unwatch(t.proc)
	// Reap under mu so that kill never signals a pid that was reaped.
	t.mu.Lock()
	st, err := t.proc.Reap()
	close(t.finished)
	t.mu.Unlock()
	// Input from now on has nowhere to go: refuse it here, since a writer
	// goroutine, which would otherwise do it, may never have started.
	t.input.discard()
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
	t.sc.out.send(outFrame{
		buf:    proto.AppendFrame(nil, proto.TypeExit, proto.Marshal(exit)),
		term:   t,
		before: func() { t.sc.forget(t) },
		after:  func() { close(t.gone) },
	}, true)
}

// awaitReader waits for the PTY to reach EOF after the session was killed.
// A reader parked on credit is the host's choice and is waited for; an
// unthrottled PTY that something we cannot find keeps open is killed again
// and finally hung up.
func (t *terminal) awaitReader() {
	tick := time.NewTicker(holderRetry)
	defer tick.Stop()
	for attempts := 0; ; {
		select {
		case <-t.readDone:
			return
		case <-tick.C:
			if t.gate.Limited() {
				continue
			}
			attempts++
			if attempts < holderAttempts {
				t.proc.KillSession(syscall.SIGKILL, true)
				continue
			}
			t.sc.logf("terminal %q: PTY %s still held open after the child exited; hanging it up", t.id, t.proc.TTY())
			t.proc.Hangup()
			<-t.readDone
			return
		}
	}
}

// close handles CLOSE: the gate lifts so the reader can drain to EOF, the
// process group gets SIGHUP, and SIGKILL follows after closeGrace.
func (t *terminal) close() {
	t.closeOnce.Do(func() {
		t.gate.Lift()
		t.mu.Lock()
		defer t.mu.Unlock()
		select {
		case <-t.finished:
			// Reaped already (its EXIT is on the way): the group's
			// number may belong to a stranger now.
			return
		default:
		}
		t.proc.SignalGroup(syscall.SIGHUP)
		t.killTimer = time.AfterFunc(closeGrace, func() { t.kill() })
	})
}

// kill ends every process of the terminal at once (shutdown, or the end of
// CLOSE's grace period).
func (t *terminal) kill() {
	t.gate.Lift()
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.finished:
		return // reaped: the pid may belong to someone else now
	default:
	}
	t.proc.SignalGroup(syscall.SIGKILL)
	t.proc.KillSession(syscall.SIGKILL, false)
}

func (t *terminal) stopKillTimer() {
	t.mu.Lock()
	if t.killTimer != nil {
		t.killTimer.Stop()
	}
	t.mu.Unlock()
}

// frameSize is the most one OUTPUT frame takes on the wire, header
// included. Hosts read their stdout pipe 64 KiB at a time (Node, libuv
// and most runtimes do), so a flood whose every frame is exactly one such
// read reaches the host as whole frames, one per read: a host decoder
// never has to join a frame from two reads, which costs naive decoders
// (concatenate, copy out) two or three extra copies of every byte.
const frameSize = 64 << 10

// minRead is the least a reader asks for when a terminal's id is so long
// that its header leaves less than this of frameSize.
const minRead = 4 << 10

// readRoom is how much a terminal whose frame header takes hdr bytes
// reads from its PTY into one OUTPUT frame.
func readRoom(hdr int) int { return max(frameSize-hdr, minRead) }

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
