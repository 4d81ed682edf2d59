package engine

import "testing"

// A live upgrade freezes the queues (a waiting PushWait then keeps its
// INPUT, which travels with the state) and then closes the connections,
// which ends their waits (stop). When both happened before the waiting
// push woke, it took either at random, and half the time dropped the
// INPUT that the freeze was to keep. A push that stops finds the queue
// frozen, or with room, first: it keeps its INPUT then.
func TestPushKeepsInputFrozenBeforeItsStop(t *testing.T) {
	frame := make([]byte, MaxQueuedInput)
	never := make(chan struct{})
	for i := range 64 {
		var b InputBudget
		q := NewInputQueue(&b)
		q.PushWait(frame, never, never, func(string) { t.Fatal("an empty queue takes a whole frame") })
		stop := make(chan struct{})
		// The wait begins (onWait runs just before it); the queue is
		// frozen and the stop comes before it goes on.
		_, queued := q.PushWaitQueued([]byte("x"), never, stop, func(string) {
			q.Freeze()
			close(stop)
		})
		if !queued || q.pending != MaxQueuedInput+1 {
			t.Fatalf("round %d: queued %v, pending %d: the INPUT frozen before the stop was dropped", i, queued, q.pending)
		}
	}
}
