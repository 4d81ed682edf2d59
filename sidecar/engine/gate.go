package engine

import "sync"

// Gate is a terminal's Credit in front of a reader that may read only
// what it may send (the plain sidecar's, which has no journal to read
// ahead into): the reader asks for room before each read and sizes the
// read to what it is granted, so a throttled terminal never reads past
// its budget. A Gate made with no budget is open and never parks. Lift
// opens a gate for good (used on close and shutdown so a parked reader
// can drain to EOF).
type Gate struct {
	mu     sync.Mutex
	wake   chan struct{} // closed and replaced whenever credit arrives or the gate lifts
	credit Credit
}

// NewGate returns a gate with the given initial budget, or an open gate
// when budget is nil.
func NewGate(budget *uint64) *Gate {
	return &Gate{wake: make(chan struct{}), credit: NewCredit(budget)}
}

// Limited reports whether the gate still throttles.
func (g *Gate) Limited() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.credit.Limited()
}

// Acquire blocks until there is credit and returns how many bytes (at most
// max) the caller may read now. The caller must report what it actually
// read with Consume. A reader that must stop waiting lifts the gate.
func (g *Gate) Acquire(max int) int {
	for {
		g.mu.Lock()
		if n := g.credit.Allow(max); n > 0 || max == 0 {
			g.mu.Unlock()
			return n
		}
		wake := g.wake
		g.mu.Unlock()
		<-wake
	}
}

// Consume subtracts n bytes that were read from the budget.
func (g *Gate) Consume(n int) {
	g.mu.Lock()
	g.credit.Take(n)
	g.mu.Unlock()
}

// Grant adds n bytes of credit. Grants to an open gate are ignored, as the
// protocol asks for terminals opened without credit.
func (g *Gate) Grant(n uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.credit.Limited() || n == 0 {
		return
	}
	g.credit.Grant(n)
	g.signal()
}

// Lift opens the gate permanently.
func (g *Gate) Lift() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.credit.Limited() {
		g.credit.Lift()
		g.signal()
	}
}

// signal wakes every waiter; g.mu must be held.
func (g *Gate) signal() {
	close(g.wake)
	g.wake = make(chan struct{})
}
