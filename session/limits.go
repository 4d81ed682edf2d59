//go:build unix

package session

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// Limits on what clients, even of our own user, can make the daemon hold.
// Without them 100 connections each sending 10 MB without a newline took
// the daemon to 2 GB, and 22,000 idle connections used up its descriptors.
const (
	// MaxConnections is how many client connections may be open at once,
	// counting those whose request waits to run (behind a WAIT, say).
	// Further ones are answered "Daemon busy" and closed at once.
	MaxConnections = 128
	// MaxPendingBytes bounds the request buffers of all connections
	// together, from the first byte read until the answer is written: six
	// requests of the full 10 MB fit.
	MaxPendingBytes = 64 << 20
	// RequestReadTimeout is how long a connection may take from accept to
	// the end of its request line.
	RequestReadTimeout = 10 * time.Second
)

// firstBuffer is the request buffer a connection starts with, outside the
// MaxPendingBytes budget (MaxConnections of them are 512 KiB).
const firstBuffer = 4 << 10

// limits counts open connections and reserved request bytes.
type limits struct {
	mu      sync.Mutex
	conns   int
	pending int64
}

// admit takes a connection slot; false means the daemon is full.
func (l *limits) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns >= MaxConnections {
		return false
	}
	l.conns++
	return true
}

func (l *limits) reserve(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending+n > MaxPendingBytes {
		return false
	}
	l.pending += n
	return true
}

func (l *limits) release(conns int, bytes int64) {
	l.mu.Lock()
	l.conns -= conns
	l.pending -= bytes
	l.mu.Unlock()
}

// clientConn is an accepted connection holding a slot and some request
// bytes of the daemon's limits; closing it gives them back.
type clientConn struct {
	*net.UnixConn
	lim *limits
	// begun is set once the first bytes of its request are read (see
	// arrivals).
	begun atomic.Bool

	mu       sync.Mutex
	reserved int64
	closed   bool
}

// grow reserves n more request bytes for this connection.
func (c *clientConn) grow(n int64) bool {
	if !c.lim.reserve(n) {
		return false
	}
	c.mu.Lock()
	c.reserved += n
	c.mu.Unlock()
	return true
}

// shrink gives back the connection's request bytes (its buffer is gone).
func (c *clientConn) shrink() {
	c.mu.Lock()
	n := c.reserved
	c.reserved = 0
	c.mu.Unlock()
	c.lim.release(0, n)
}

// Close closes the connection and gives back its slot and bytes, once.
func (c *clientConn) Close() error {
	err := c.UnixConn.Close()
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	n := c.reserved
	c.reserved = 0
	c.mu.Unlock()
	if first {
		c.lim.release(1, n)
	}
	return err
}

// errBusy answers a request the daemon has no room to read.
func errBusy(what string) error {
	return wire.RequestError(fmt.Sprintf("Daemon busy: %s; try again later", what))
}

// busyConnections refuses a connection over MaxConnections from the
// accept loop: one short write into the empty socket buffer, which cannot
// block, then close. The client reads the answer before the reset.
func busyConnections(c *net.UnixConn) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(encodeResponse(nil, errBusy(fmt.Sprintf("%d connections are open, the limit", MaxConnections))))
	c.Close()
}
