package sidecar

import (
	"strings"
	"testing"
	"time"
)

// waitingPush runs pushWait in a goroutine and returns a channel that gets
// the reason once it waits, and one closed when it returns.
func waitingPush(q *inputQueue, data []byte, gone, stop chan struct{}) (why chan string, done chan struct{}) {
	why, done = make(chan string, 1), make(chan struct{})
	go func() {
		defer close(done)
		q.pushWait(data, gone, stop, func(w string) { why <- w })
	}()
	return why, done
}

func expectWait(t *testing.T, why chan string, done chan struct{}, want string) {
	t.Helper()
	select {
	case w := <-why:
		if !strings.Contains(w, want) {
			t.Fatalf("waits because %q, want it to mention %q", w, want)
		}
	case <-done:
		t.Fatal("the push went through past the bound")
	case <-time.After(10 * time.Second):
		t.Fatal("the push neither went through nor waited")
	}
}

func expectDone(t *testing.T, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the push still waits after room was made")
	}
}

func TestInputQueueBounds(t *testing.T) {
	frame := make([]byte, maxQueuedInput) // shared: queues keep references
	never := make(chan struct{})

	t.Run("per terminal", func(t *testing.T) {
		var b inputBudget
		q := newInputQueue(&b)
		q.pushWait(frame, never, never, func(string) { t.Fatal("an empty queue takes a whole frame") })
		why, done := waitingPush(q, []byte("x"), never, never)
		expectWait(t, why, done, "per terminal")
		for _, c := range q.take() {
			q.done(len(c))
		}
		expectDone(t, done)
		if q.pending != 1 || b.total != 1 {
			t.Fatalf("pending %d, total %d after the wait, want 1 and 1", q.pending, b.total)
		}
	})

	t.Run("across terminals", func(t *testing.T) {
		var b inputBudget
		qs := make([]*inputQueue, maxQueuedInputTotal/maxQueuedInput+1)
		for i := range qs {
			qs[i] = newInputQueue(&b)
		}
		for _, q := range qs[:len(qs)-1] {
			q.pushWait(frame, never, never, func(string) { t.Fatal("under the total bound") })
		}
		last := qs[len(qs)-1]
		why, done := waitingPush(last, frame, never, never)
		expectWait(t, why, done, "all terminals")
		for _, c := range qs[0].take() {
			qs[0].done(len(c))
		}
		expectDone(t, done)
		if b.total != maxQueuedInputTotal {
			t.Fatalf("total %d, want %d", b.total, maxQueuedInputTotal)
		}
	})

	t.Run("terminal ends while waiting", func(t *testing.T) {
		var b inputBudget
		q := newInputQueue(&b)
		q.pushWait(frame, never, never, func(string) {})
		gone := make(chan struct{})
		why, done := waitingPush(q, []byte("x"), gone, never)
		expectWait(t, why, done, "per terminal")
		close(gone)
		expectDone(t, done)
		if b.total != 0 {
			t.Fatalf("total %d after the terminal ended, want 0 (its queue discarded)", b.total)
		}
	})
}
