package engine

import (
	"fmt"
	"sync"
)

// Bounds on INPUT bytes queued for children that have not read them yet.
// Nothing under them is ever dropped: past either bound the connection's
// dispatch waits until the queue drains, the back-pressure that hosts
// written for the original sidecar expect (its INPUT blocked, it never
// answered ERROR).
const (
	// MaxQueuedInput bounds one terminal's queue. It is not smaller than
	// proto.MaxData, so one INPUT frame always fits an empty queue.
	MaxQueuedInput = 16 << 20
	// MaxQueuedInputTotal bounds the sum over all terminals, so that many
	// stuck children cannot take the server's memory with them.
	MaxQueuedInputTotal = 64 << 20
)

// Budget counts the input bytes queued across all terminals of a server
// and lets a sender wait for room. Each terminal keeps its own count of
// what it queued (pending below); the budget checks both bounds. Its
// mutex is the last lock taken: nothing is locked under it.
type Budget struct {
	mu    sync.Mutex
	total int
	freed chan struct{} // non-nil while someone waits; closed when bytes are freed
}

// Full says why n more bytes, for a terminal that has pending bytes
// queued, do not fit now, or "" if they do. An empty queue takes any one
// frame, and so does an empty budget, so that a frame larger than a bound
// still goes through; the total stays under the bound plus one frame.
func (b *Budget) Full(pending, n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fullLocked(pending, n)
}

func (b *Budget) fullLocked(pending, n int) string {
	switch {
	case pending > 0 && pending+n > MaxQueuedInput:
		return fmt.Sprintf("its input queue holds %d bytes (limit %d per terminal)", pending, MaxQueuedInput)
	case b.total > 0 && b.total+n > MaxQueuedInputTotal:
		return fmt.Sprintf("input queued for all terminals holds %d bytes (limit %d)", b.total, MaxQueuedInputTotal)
	}
	return ""
}

// Reserve counts n more bytes for a terminal with pending bytes queued if
// they fit. If they do not, it returns a channel that is closed once
// bytes are released (or Wake is called); the caller waits on it and
// tries again.
func (b *Budget) Reserve(pending, n int) (ok bool, freed <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fullLocked(pending, n) == "" {
		b.total += n
		return true, nil
	}
	if b.freed == nil {
		b.freed = make(chan struct{})
	}
	return false, b.freed
}

// Add counts n bytes whatever the bounds (input that must be kept: what
// a live upgrade handed over, what a frozen terminal takes).
func (b *Budget) Add(n int) {
	b.mu.Lock()
	b.total += n
	b.mu.Unlock()
}

// Release uncounts n bytes written (or dropped) and wakes the waiters.
func (b *Budget) Release(n int) {
	b.mu.Lock()
	b.total -= n
	b.wakeLocked()
	b.mu.Unlock()
}

// Wake wakes the waiters without freeing anything: what they wait for
// may have changed otherwise (their terminal ended, or was frozen).
func (b *Budget) Wake() {
	b.mu.Lock()
	b.wakeLocked()
	b.mu.Unlock()
}

func (b *Budget) wakeLocked() {
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
}

// Total is the bytes counted now.
func (b *Budget) Total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
