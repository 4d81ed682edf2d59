package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

const (
	// maxPendingLog bounds what the sidecar's log holds for a stderr
	// nobody reads; lines beyond it are counted and left out.
	maxPendingLog = 256 << 10
	// logFlushWait bounds how long the sidecar waits at its end for its
	// last lines (why it ended) to reach a stderr that is not read.
	logFlushWait = time.Second
)

// stderrSink takes the log's lines without ever blocking the goroutine
// that logs, and writes them to w on a goroutine of its own. A host may
// pipe our stderr and never read it: once the pipe filled, every log line
// would otherwise stop the dispatch loop or a terminal's supervisor, and
// with them every terminal. Lines it cannot hold are left out and counted.
type stderrSink struct {
	w       io.Writer
	mu      sync.Mutex
	pending []byte // written by Write, taken by run
	dropped int    // lines left out since the last one kept
	busy    bool   // run is writing what it took
	wake    chan struct{}
	drained chan struct{} // run emptied pending (flush waits on it)
}

func newStderrSink(w io.Writer) *stderrSink {
	s := &stderrSink{w: w, wake: make(chan struct{}, 1), drained: make(chan struct{}, 1)}
	go s.run() // lives as long as the process: stderr is never closed
	return s
}

func (s *stderrSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	if len(s.pending)+len(p) > maxPendingLog {
		s.dropped++
		s.mu.Unlock()
		return len(p), nil
	}
	if s.dropped > 0 {
		s.pending = fmt.Appendf(s.pending, "ptyplex-sidecar: %d log lines left out: stderr was not read\n", s.dropped)
		s.dropped = 0
	}
	s.pending = append(s.pending, p...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *stderrSink) run() {
	var b []byte
	for range s.wake {
		s.mu.Lock()
		b, s.pending = s.pending, b[:0]
		s.busy = true
		s.mu.Unlock()
		s.w.Write(b) // what fails to reach stderr has nowhere else to go
		s.mu.Lock()
		s.busy = false
		empty := len(s.pending) == 0
		s.mu.Unlock()
		if empty {
			select {
			case s.drained <- struct{}{}:
			default:
			}
		}
	}
}

// flush waits until what was logged so far is written, or logFlushWait.
func (s *stderrSink) flush() {
	timer := time.NewTimer(logFlushWait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		done := len(s.pending) == 0 && !s.busy
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-s.drained:
		case <-timer.C:
			return
		}
	}
}
