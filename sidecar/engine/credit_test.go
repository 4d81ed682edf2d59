package engine

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCreditUnlimitedIgnoresGrantsAndTakes(t *testing.T) {
	c := NewCredit(nil)
	assert.False(t, c.Limited())
	c.Take(1 << 20)
	c.Grant(5)
	assert.Equal(t, 1<<30, c.Allow(1<<30))
	assert.Equal(t, uint64(math.MaxUint64), c.Wire())
}

func TestCreditBoundsSendsAndLifts(t *testing.T) {
	b := uint64(100)
	c := NewCredit(&b)
	assert.Equal(t, 100, c.Allow(4096))
	assert.Equal(t, 50, c.Allow(50))
	c.Take(70)
	assert.Equal(t, 30, c.Allow(4096))
	c.Take(100) // more than is left: spent, not wrapped round
	assert.Equal(t, 0, c.Allow(4096))
	c.Grant(8)
	assert.Equal(t, 8, c.Allow(4096))
	c.Lift()
	assert.False(t, c.Limited())
	assert.Equal(t, 4096, c.Allow(4096))
}

func TestCreditGrantSaturates(t *testing.T) {
	b := uint64(math.MaxUint64 - 3)
	c := NewCredit(&b)
	c.Grant(10)
	assert.True(t, c.Limited())
	assert.Equal(t, math.MaxInt, c.Allow(math.MaxInt))
}

func TestCreditWireRoundTrip(t *testing.T) {
	for _, c := range []Credit{NewCredit(nil), NewCredit(new(uint64)), NewCredit(ptr(12345)), NewCredit(ptr(math.MaxUint64))} {
		back := CreditFromWire(c.Wire())
		assert.Equal(t, c.Limited(), back.Limited(), "%+v", c)
		assert.Equal(t, c.Allow(1<<20), back.Allow(1<<20), "%+v", c)
	}
}

func ptr(v uint64) *uint64 { return &v }
