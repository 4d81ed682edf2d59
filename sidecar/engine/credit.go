package engine

import "math"

// Credit is how many more OUTPUT bytes a host lets a terminal send: the
// protocol's CREDIT accounting, one implementation for both servers. A
// terminal opened (or attached) without a credit is unlimited and stays
// so; CLOSE and shutdown lift a limited one for good so that the output
// drains to the child's end. Credit has no lock: its owner guards it
// (Gate in the plain sidecar, the terminal's lock in the persistent
// server).
type Credit struct {
	limited bool
	budget  uint64
}

// NewCredit returns the credit of a terminal opened with budget, or an
// unlimited one when budget is nil.
func NewCredit(budget *uint64) Credit {
	if budget == nil {
		return Credit{}
	}
	return Credit{limited: true, budget: *budget}
}

// Limited reports whether the credit still bounds what is sent.
func (c Credit) Limited() bool { return c.limited }

// Allow is how many of want bytes may be sent now: all of them when
// unlimited, else at most the budget (0 when it is spent).
func (c Credit) Allow(want int) int {
	if c.limited && c.budget < uint64(want) {
		return int(c.budget)
	}
	return want
}

// Take counts n bytes sent (or read for sending) against the budget.
func (c *Credit) Take(n int) {
	if c.limited {
		c.budget -= min(uint64(n), c.budget)
	}
}

// Grant adds n bytes, saturating. Grants to an unlimited credit are
// ignored, as the protocol asks for terminals opened without one.
func (c *Credit) Grant(n uint64) {
	if c.limited {
		c.budget += min(n, math.MaxUint64-c.budget)
	}
}

// Lift makes the credit unlimited for good.
func (c *Credit) Lift() { c.limited, c.budget = false, 0 }

// unlimitedWire is Wire's value for an unlimited credit.
const unlimitedWire = math.MaxUint64

// Wire is the credit as one number, for the live upgrade's handover:
// the budget, or math.MaxUint64 when unlimited (a limited budget that
// large is written one less, which no host can tell apart).
func (c Credit) Wire() uint64 {
	if !c.limited {
		return unlimitedWire
	}
	return min(c.budget, unlimitedWire-1)
}

// CreditFromWire is the credit Wire wrote.
func CreditFromWire(v uint64) Credit {
	if v == unlimitedWire {
		return Credit{}
	}
	return Credit{limited: true, budget: v}
}
