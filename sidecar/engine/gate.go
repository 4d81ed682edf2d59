package engine

import "sync"

// Gate is a terminal's Credit in front of a reader that may read only
// what it may send (the plain sidecar's, which has no journal to read
// ahead into): the reader asks for room before each read and sizes the
// read to what it is granted, so a throttled terminal never reads past
// its budget. A Gate made with no budget is open and never parks. Lift
// opens a gate for good (used on CLOSE and at the end of stdin, so a
// parked reader can drain to EOF); Spill lets the reader drain without
// sending past the budget (a shutdown the host did not ask for).
type Gate struct {
	mu     sync.Mutex
	wake   chan struct{} // closed and replaced whenever credit arrives or the gate lifts
	credit Credit
	spill  bool // Spill: read everything, send only what the budget allows
}

// NewGate returns a gate with the given initial budget, or an open gate
// when budget is nil.
func NewGate(budget *uint64) *Gate {
	return &Gate{wake: make(chan struct{}), credit: NewCredit(budget)}
}

// Limited reports whether the gate still throttles: the reader may have
// to wait for the host. A spilling gate never makes it wait.
func (g *Gate) Limited() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.credit.Limited() && !g.spill
}

// Acquire blocks until there is credit and returns how many bytes (at most
// max) the caller may read now. The caller must report what it actually
// read with Consume. A reader that must stop waiting lifts the gate. A
// spilling gate lets it read max at once, whatever the budget.
func (g *Gate) Acquire(max int) int {
	for {
		g.mu.Lock()
		if g.spill {
			g.mu.Unlock()
			return max
		}
		if n := g.credit.Allow(max); n > 0 || max == 0 {
			g.mu.Unlock()
			return n
		}
		wake := g.wake
		g.mu.Unlock()
		<-wake
	}
}

// Consume subtracts n bytes that were read from the budget and returns
// how many of them the caller may send: all of them, since Acquire sized
// the read to the budget, unless the gate spills, when the rest of the
// budget is the most that goes out and the caller drops the others.
func (g *Gate) Consume(n int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	send := g.credit.Allow(n)
	g.credit.Take(send)
	return send
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
		g.spill = false
		g.signal()
	}
}

// Spill releases a parked reader for good without lifting the budget:
// the reader reads on to the PTY's end, but only what the host granted
// (and grants from now on) is sent, the rest is dropped. It is for a
// shutdown the host did not ask for (a signal, a corrupt stream): such
// a host still counts the credit it granted, and a host that checks it
// (the Go client and the npm package do) would take output past it for
// a broken protocol. A later Lift (CLOSE, the end of stdin) sends all.
func (g *Gate) Spill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.credit.Limited() && !g.spill {
		g.spill = true
		g.signal()
	}
}

// signal wakes every waiter; g.mu must be held.
func (g *Gate) signal() {
	close(g.wake)
	g.wake = make(chan struct{})
}
