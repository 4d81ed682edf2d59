package sidecar

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedWriter blocks every Write until open is closed, and counts what it
// was given.
type gatedWriter struct {
	open  chan struct{}
	bytes atomic.Int64
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	<-g.open
	g.bytes.Add(int64(len(p)))
	return len(p), nil
}

// TestWriterCloseReleasesBlockedSenders: senders waiting for room in a
// full lane when the writer closes either get their frame written or see
// it dropped; either way send returns and the frame's callbacks run. (A
// sender that found room only after the writer goroutine had ended used
// to leave its frame in the lane for nobody, and whoever waited on its
// callbacks, a terminal's end or an id to free, waited forever.)
func TestWriterCloseReleasesBlockedSenders(t *testing.T) {
	const senders = 4 * writerQueue
	for round := 0; round < 20; round++ {
		g := &gatedWriter{open: make(chan struct{})}
		w := newWriter(g, nil, func(error) {})
		term := &terminal{id: "t"}
		var afters, befores atomic.Int32
		var sent sync.WaitGroup
		frame := func() outFrame {
			return outFrame{
				buf:    make([]byte, 8<<10), // bulk lane: larger than prioMax
				term:   term,
				before: func() { befores.Add(1) },
				after:  func() { afters.Add(1) },
			}
		}
		// More senders than the lane holds; the writer goroutine is stuck
		// in its first Write, so the rest wait for room.
		for i := 0; i < senders; i++ {
			sent.Add(1)
			go func() {
				defer sent.Done()
				w.send(frame(), false)
			}()
		}
		waitFor(t, "the bulk lane to fill", func() bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.bulk.full()
		})
		closed := make(chan struct{})
		go func() {
			w.close()
			close(closed)
		}()
		waitFor(t, "close to begin", func() bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.closed
		})
		close(g.open)
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("close did not return")
		}
		done := make(chan struct{})
		go func() {
			sent.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a sender is still blocked after close")
		}
		if a, b := afters.Load(), befores.Load(); a != senders || b != senders {
			t.Fatalf("round %d: after ran %d times and before %d times for %d frames", round, a, b, senders)
		}
		if got := g.bytes.Load(); got%(8<<10) != 0 || got > senders*(8<<10) {
			t.Fatalf("round %d: %d bytes written: not a whole number of the frames sent", round, got)
		}
	}
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
