package engine

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOpenGateNeverParks(t *testing.T) {
	g := NewGate(nil)
	assert.False(t, g.Limited())
	assert.Equal(t, 4096, g.Acquire(4096))
	g.Consume(4096)
	g.Grant(10) // ignored
	assert.Equal(t, 4096, g.Acquire(4096))
}

func TestGateSizesReadsToBudget(t *testing.T) {
	budget := uint64(100)
	g := NewGate(&budget)
	assert.Equal(t, 100, g.Acquire(4096))
	g.Consume(60)
	assert.Equal(t, 40, g.Acquire(4096))
	assert.Equal(t, 10, g.Acquire(10))
	g.Consume(40)

	got := make(chan int)
	go func() { got <- g.Acquire(4096) }()
	select {
	case n := <-got:
		t.Fatalf("Acquire returned %d with no budget", n)
	default:
	}
	g.Grant(7)
	select {
	case n := <-got:
		assert.Equal(t, 7, n)
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire did not wake on Grant")
	}
}

func TestGateLiftReleasesParkedReader(t *testing.T) {
	zero := uint64(0)
	g := NewGate(&zero)
	got := make(chan int)
	go func() { got <- g.Acquire(512) }()
	g.Lift()
	select {
	case n := <-got:
		assert.Equal(t, 512, n)
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire did not wake on Lift")
	}
	assert.False(t, g.Limited())
}

func TestGateGrantSaturates(t *testing.T) {
	b := uint64(math.MaxUint64 - 1)
	g := NewGate(&b)
	g.Grant(10)
	assert.Equal(t, math.MaxInt32, g.Acquire(math.MaxInt32))
}

// A spilling gate lets its reader read on to the end, but passes only
// what the budget (and later grants) allow; Lift passes everything.
func TestGateSpillSendsOnlyTheBudget(t *testing.T) {
	budget := uint64(10)
	g := NewGate(&budget)
	assert.Equal(t, 10, g.Consume(g.Acquire(4096)))

	got := make(chan int)
	go func() { got <- g.Acquire(4096) }()
	g.Spill()
	select {
	case n := <-got:
		assert.Equal(t, 4096, n)
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire did not wake on Spill")
	}
	assert.False(t, g.Limited(), "a spilling gate never makes its reader wait")
	assert.Equal(t, 0, g.Consume(4096))
	g.Grant(5)
	assert.Equal(t, 4096, g.Acquire(4096))
	assert.Equal(t, 5, g.Consume(4096))
	assert.Equal(t, 0, g.Consume(4096))
	g.Lift()
	assert.Equal(t, 4096, g.Consume(4096))

	open := NewGate(nil)
	open.Spill()
	assert.Equal(t, 4096, open.Consume(4096), "an open gate has nothing to spill")
}
