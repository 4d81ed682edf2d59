//go:build unix

package session

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// arrivalWait bounds how long a request waits for an earlier connection
// whose request has begun to arrive but is not read yet (a client that
// sends half a line and stalls must not hold the session up for longer).
const arrivalWait = 2 * time.Second

// arrivals keeps requests in the order their bytes reached the daemon.
// Every connection is read on its own goroutine, so the one whose line
// completes first would otherwise reach the queue first: a client that
// sends INPUT on one connection and the next INPUT on another without
// waiting for the answer (send, close, send again) saw its keystrokes
// reordered. Connections are numbered as they are accepted; before a
// request is queued, it waits for every earlier connection that already
// has bytes for the daemon (read in part, or waiting in the socket) to be
// queued first. An earlier connection with nothing sent yet is passed:
// whatever it sends later arrived later.
type arrivals struct {
	mu   sync.Mutex
	open []*arrival // accepted and not yet settled, in accept order
}

// arrival is one accepted connection's place in line.
type arrival struct {
	c       *clientConn
	settled chan struct{} // closed once its request is queued or answered
	once    sync.Once
	// stalled says a later request already waited arrivalWait for it in
	// vain: later ones pass it, so a client that sends half a request
	// and stops costs the session one wait, not one per request.
	stalled atomic.Bool
}

// add gives an accepted connection its place; only the accept loop calls
// it, so places follow the order of accept.
func (a *arrivals) add(c *clientConn) *arrival {
	x := &arrival{c: c, settled: make(chan struct{})}
	a.mu.Lock()
	a.open = append(a.open, x)
	a.mu.Unlock()
	return x
}

// settle gives up x's place: its request was queued, answered at once, or
// is not a request (an attach stream). Idempotent.
func (a *arrivals) settle(x *arrival) {
	x.once.Do(func() {
		a.mu.Lock()
		for i, y := range a.open {
			if y == x {
				a.open = append(a.open[:i], a.open[i+1:]...)
				break
			}
		}
		a.mu.Unlock()
		close(x.settled)
	})
}

// awaitEarlier returns once every connection accepted before x that has
// begun sending has been settled, or after arrivalWait.
func (a *arrivals) awaitEarlier(x *arrival) {
	a.mu.Lock()
	var earlier []*arrival
	for _, y := range a.open {
		if y == x {
			break
		}
		earlier = append(earlier, y)
	}
	a.mu.Unlock()
	var timeout <-chan time.Time
	for _, y := range earlier {
		// In this order: y's reader sets begun before it takes the
		// first bytes out of the socket (awaitFirstBytes), so if none
		// are waiting and begun is still unset after that, y has not
		// received any yet.
		if y.stalled.Load() || pendingBytes(y.c) == 0 && !y.c.begun.Load() {
			continue
		}
		if timeout == nil {
			t := time.NewTimer(arrivalWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-y.settled:
		case <-timeout:
			y.stalled.Store(true)
			return
		}
	}
}

// awaitFirstBytes waits, without reading them, until c's first bytes
// have arrived (or its peer closed, or the read deadline passed), and
// then marks c begun: while they wait in the socket pendingBytes sees
// them, and from then on begun does.
func awaitFirstBytes(c *clientConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var b [1]byte
	rerr := rc.Read(func(fd uintptr) bool {
		for {
			_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
			switch err {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false // park until the poller says readable
			}
			return true // bytes, end of file or an error: readLine says which
		}
	})
	c.begun.Store(true)
	if rerr != nil && !errors.Is(rerr, os.ErrDeadlineExceeded) {
		return wire.Invalidf("reading request: %v", rerr)
	}
	return rerr
}

// pendingBytes is how many bytes wait unread in c's socket (0 if that
// cannot be told, or c is closed).
func pendingBytes(c *clientConn) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	// Control keeps the descriptor open while it runs, so the number is
	// never asked of a descriptor reused by something else.
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), fionread); err == nil {
			n = v
		}
	})
	return n
}
