package sidecar

import (
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// shutdownBound caps how long shutdown waits for terminals to report EXIT
// after everything was killed (only a process stuck in the kernel, in
// uninterruptible sleep, can take that long), and how long it lets a
// write to a host that does not read hold it up.
const shutdownBound = 10 * time.Second

// Options configure a Sidecar.
type Options struct {
	// Log receives diagnostics; nil discards them. Never the frame stream.
	Log *log.Logger
	// Tap, if set, sees every frame: fromHost true for frames read from the
	// host, false for frames written to it, each as its full encoding. It
	// is called from the dispatch loop and from whichever goroutine holds
	// the output stream (one at a time), and must not retain frame.
	Tap func(fromHost bool, frame []byte)
	// Watchdog, if set, is told about every terminal's process so that it
	// can kill what is left if the sidecar dies without tearing down.
	Watchdog Watchdog
}

// Sidecar serves one host over one frame stream.
type Sidecar struct {
	opts  Options
	out   *writer
	input engine.InputBudget // INPUT queued across terminals

	spawnSlots chan struct{}     // one token per spawn in flight (maxSpawns)
	ahead      *engine.Lookahead // the frame reader, which reads on while dispatch waits for input room (lookahead.go)
	// inputStop ends a wait of the dispatch loop for input room: closed
	// once Stop was called or the host's stream ended (set by readLoop).
	inputStop <-chan struct{}
	// beforeSpawn, if set (by in-package tests only), runs on the spawn
	// goroutine just before the child is started, to make a spawn slow.
	beforeSpawn func(id string)

	mu       sync.Mutex
	terms    map[string]*terminal // from OPEN (spawning or live) until its EXIT or ERROR is written
	closing  bool                 // shutdown began: no new terminals
	stopOnce sync.Once
	stop     chan struct{} // closed to ask Run to shut down
	stopErr  error         // why, when it was an error
}

// ErrOutputBroken reports that the host stopped accepting frames.
var ErrOutputBroken = errors.New("output stream broken")

// New prepares a sidecar writing frames to out.
func New(out io.Writer, opts Options) *Sidecar {
	if opts.Log == nil {
		opts.Log = log.New(io.Discard, "", 0)
	}
	s := &Sidecar{opts: opts, terms: make(map[string]*terminal), stop: make(chan struct{}),
		spawnSlots: make(chan struct{}, maxSpawns)}
	s.inputStop = s.stop // until readLoop has a look-ahead to watch too
	var tee func([]byte)
	if opts.Tap != nil {
		tee = func(b []byte) { opts.Tap(false, b) }
	}
	s.out = newWriter(out, tee, func(err error) {
		s.Stop(fmt.Errorf("%w: %v", ErrOutputBroken, err))
	})
	return s
}

func (s *Sidecar) logf(format string, args ...any) { s.opts.Log.Printf(format, args...) }

// Stop asks Run to shut down; err (nil for an orderly stop) becomes Run's
// result. Safe to call from any goroutine, more than once.
func (s *Sidecar) Stop(err error) {
	s.stopOnce.Do(func() {
		s.stopErr = err
		close(s.stop)
	})
}

// Run reads frames from in and serves them until in ends, the stream turns
// out corrupt, the output breaks or Stop is called. Then it kills every
// terminal, waits for their EXIT frames to be written and returns: nil after
// a clean end of input or Stop(nil), the cause otherwise.
func (s *Sidecar) Run(in io.Reader) error {
	frames := make(chan error, 1)
	go func() { frames <- s.readLoop(in) }()
	var err error
	hostEnded := false // the host closed stdin: it asked for the end
	select {
	case err = <-frames:
		hostEnded = err == nil
		s.Stop(err)
	case <-s.stop:
	}
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	stalled := s.shutdown(hostEnded)
	// The reader goroutine may still sit in a read of in; it touches
	// nothing once closing is set, and ends with the process.
	if stalled != nil && s.stopErr == nil {
		return stalled
	}
	return s.stopErr
}

// readLoop is the dispatch loop. It returns nil at a clean end of input.
func (s *Sidecar) readLoop(in io.Reader) error {
	s.ahead = newLookahead(s, proto.NewReader(in))
	// A host that closes stdin while an INPUT waits for its child to
	// read asks for the end (the seed protocol: the sidecar kills every
	// terminal and exits), but the dispatch loop would reach that end
	// only once the child read: the look-ahead sees it first, and the
	// wait ends then, the INPUT dropped.
	stop := make(chan struct{})
	s.inputStop = stop
	go func() {
		select {
		case <-s.stop:
		case <-s.ahead.Ended():
		}
		close(stop)
	}()
	for {
		res := s.ahead.Next()
		f, err := res.Frame, res.Err
		if err == io.EOF {
			return nil
		}
		if err != nil {
			s.logf("reading frames: %v", err)
			return err
		}
		if s.opts.Tap != nil && !res.Ahead {
			s.opts.Tap(true, proto.AppendFrame(nil, f.Type, f.Body))
		}
		if s.isClosing() {
			return nil
		}
		s.dispatch(f)
	}
}

func (s *Sidecar) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// shutdown kills every terminal, waits for their EXIT frames (bounded) and
// stops the writer. A terminal whose spawn is in flight or still waiting
// for its turn is killed as soon as its child runs (after its OPENED):
// every OPEN read before shutdown gets its answer, and every child its
// EXIT. It reports an error when the host read nothing of stdout for
// shutdownBound while frames were still queued: it leaves them then.
//
// Credit gates release their readers so that each reaches its PTY's end
// and its EXIT goes out. At the end of stdin they lift, as the protocol
// has it, and a host that closed stdin stops counting the credit it
// granted. After a signal, a corrupt stream or a broken stdout the host
// did not ask for the end and still counts it: the gates spill, and
// output past the credit is dropped rather than sent to a host that
// would take it for a protocol violation (ours do) and lose every EXIT.
func (s *Sidecar) shutdown(hostEnded bool) error {
	s.mu.Lock()
	live := make([]*terminal, 0, len(s.terms))
	for _, t := range s.terms {
		live = append(live, t)
	}
	s.mu.Unlock()
	for _, t := range live {
		if hostEnded {
			t.gate.Lift()
		} else {
			t.gate.Spill()
		}
		t.whenLive(t.kill, -1)
	}
	deadline := time.NewTimer(shutdownBound)
	defer deadline.Stop()
	check := time.NewTicker(shutdownBound / 10)
	defer check.Stop()
	for _, t := range live {
	waiting:
		for {
			select {
			case <-t.exitFlushed:
				break waiting
			case <-check.C:
				// EXITs held up behind a host that does not read.
				if s.out.stalledFor(shutdownBound) {
					return s.closeOutput()
				}
			case <-deadline.C:
				s.logf("shutdown: gave up waiting for terminals after %v", shutdownBound)
				return s.closeOutput()
			}
		}
	}
	return s.closeOutput()
}

// closeOutput writes what is queued, unless the host stops taking it.
func (s *Sidecar) closeOutput() error {
	if s.out.closeUnlessStalled(shutdownBound) {
		return nil
	}
	return fmt.Errorf("%w: the host read nothing of it for %v while we shut down; frames still queued are lost", ErrOutputBroken, shutdownBound)
}

// lookup returns the terminal with id (live or spawning), or nil.
func (s *Sidecar) lookup(id string) *terminal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.terms[id]
}

// forget frees t's id; the writer calls it just before writing t's EXIT
// (or the ERROR of its failed spawn).
func (s *Sidecar) forget(t *terminal) {
	s.mu.Lock()
	if s.terms[t.id] == t {
		delete(s.terms, t.id)
	}
	s.mu.Unlock()
}
