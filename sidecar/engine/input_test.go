package engine

import (
	"strings"
	"testing"
	"time"
)

// waitingPush runs pushWait in a goroutine and returns a channel that gets
// the reason once it waits, and one closed when it returns.
func waitingPush(q *InputQueue, data []byte, gone, stop chan struct{}) (why chan string, done chan struct{}) {
	why, done = make(chan string, 1), make(chan struct{})
	go func() {
		defer close(done)
		q.PushWait(data, gone, stop, func(w string) { why <- w })
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
	frame := make([]byte, MaxQueuedInput) // shared: queues keep references
	never := make(chan struct{})

	t.Run("per terminal", func(t *testing.T) {
		var b InputBudget
		q := NewInputQueue(&b)
		q.PushWait(frame, never, never, func(string) { t.Fatal("an empty queue takes a whole frame") })
		why, done := waitingPush(q, []byte("x"), never, never)
		expectWait(t, why, done, "per terminal")
		for _, c := range q.Take() {
			q.Done(len(c))
		}
		expectDone(t, done)
		if q.pending != 1 || b.total != 1 {
			t.Fatalf("pending %d, total %d after the wait, want 1 and 1", q.pending, b.total)
		}
	})

	t.Run("across terminals", func(t *testing.T) {
		var b InputBudget
		qs := make([]*InputQueue, MaxQueuedInputTotal/MaxQueuedInput+1)
		for i := range qs {
			qs[i] = NewInputQueue(&b)
		}
		for _, q := range qs[:len(qs)-1] {
			q.PushWait(frame, never, never, func(string) { t.Fatal("under the total bound") })
		}
		last := qs[len(qs)-1]
		why, done := waitingPush(last, frame, never, never)
		expectWait(t, why, done, "all terminals")
		for _, c := range qs[0].Take() {
			qs[0].Done(len(c))
		}
		expectDone(t, done)
		if b.total != MaxQueuedInputTotal {
			t.Fatalf("total %d, want %d", b.total, MaxQueuedInputTotal)
		}
	})

	t.Run("terminal ends while waiting", func(t *testing.T) {
		var b InputBudget
		q := NewInputQueue(&b)
		q.PushWait(frame, never, never, func(string) {})
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

// An idle queue hands a payload straight to try; what try does not take is
// queued ahead of later payloads, which then queue too rather than overtake
// it, and the writer goroutine gets nothing while a direct write is under
// way.
func TestInputQueueDirectWrite(t *testing.T) {
	var b InputBudget
	q := NewInputQueue(&b)
	never := make(chan struct{})
	noWait := func(string) { t.Fatal("an idle queue never waits") }
	var wrote []string
	q.try = func(p []byte) int {
		if c := q.Take(); c != nil {
			t.Errorf("take gave %q during a direct write", c)
		}
		wrote = append(wrote, string(p))
		return len(p)
	}
	q.PushWait([]byte("ab"), never, never, noWait)
	if len(wrote) != 1 || wrote[0] != "ab" || q.pending != 0 || b.total != 0 || q.Take() != nil {
		t.Fatalf("after a whole direct write: wrote %q, pending %d, total %d", wrote, q.pending, b.total)
	}

	q.try = func(p []byte) int { return 1 } // the PTY takes one byte
	q.PushWait([]byte("cd"), never, never, noWait)
	q.try = func(p []byte) int { t.Fatalf("direct write of %q while input is queued", p); return 0 }
	q.PushWait([]byte("ef"), never, never, noWait)
	if q.pending != 3 || b.total != 3 {
		t.Fatalf("pending %d, total %d, want 3 and 3", q.pending, b.total)
	}
	select {
	case <-q.wake:
	default:
		t.Fatal("the writer goroutine was not woken for the rest")
	}
	var got []string
	for _, c := range q.Take() {
		got = append(got, string(c))
		q.Done(len(c))
	}
	q.Idle()
	if strings.Join(got, ",") != "d,ef" || q.pending != 0 || b.total != 0 {
		t.Fatalf("writer got %q (pending %d, total %d), want the rest of the direct write first: d,ef", got, q.pending, b.total)
	}
}

// TestInputQueueStartsWriterOnDemand: the writer goroutine starts once,
// for the first input that has to queue, and only after the terminal is
// live; input queued before that starts it when the terminal goes live.
func TestInputQueueStartsWriterOnDemand(t *testing.T) {
	never := make(chan struct{})
	noWait := func(string) { t.Fatal("an idle queue never waits") }

	var b InputBudget
	q := NewInputQueue(&b)
	starts := 0
	q.EnableWriter(func() { starts++ })
	q.SetTry(func(p []byte) int { return len(p) })
	q.PushWait([]byte("typed"), never, never, noWait)
	if starts != 0 {
		t.Fatalf("writer started %d times for input the PTY took at once", starts)
	}
	q.SetTry(func(p []byte) int { return 0 }) // the child stopped reading
	q.PushWait([]byte("a"), never, never, noWait)
	q.PushWait([]byte("b"), never, never, noWait)
	if starts != 1 {
		t.Fatalf("writer started %d times for input that queued, want once", starts)
	}

	// Input that arrives while the child is spawned queues (no try yet)
	// and must not start a writer with no PTY to write to.
	q2 := NewInputQueue(&b)
	q2.PushWait([]byte("early"), never, never, noWait)
	started := false
	q2.EnableWriter(func() { started = true })
	if !started {
		t.Fatal("input queued before the terminal went live did not start the writer")
	}
	select {
	case <-q2.wake:
	default:
		t.Fatal("the writer was started but not woken for the queued input")
	}
}
