package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Resuming after a drop (docs/remote.md, "Reconnecting"). A transport can
// end without the host asking (ssh killed, the network gone, a laptop that
// slept). With Options.Reconnect and a persistent sidecar on the other
// side, whose terminals outlive the connection, the client starts the
// transport again and ATTACHes every live terminal at the offset it had
// received: Read continues with neither gap nor repeat, and nothing of it
// shows to the caller but events and a pause.

// Defaults of ReconnectPolicy.
const (
	DefaultReconnectAttempts = 10
	DefaultReconnectDelay    = 250 * time.Millisecond
	DefaultReconnectMaxDelay = 30 * time.Second
	DefaultQueueLimit        = 1 << 20
	DefaultKeepaliveInterval = 5 * time.Second
	// DefaultKeepaliveTimeout with DefaultKeepaliveInterval notices a dead
	// connection within 15 s (see ReconnectPolicy.KeepaliveTimeout).
	DefaultKeepaliveTimeout = 10 * time.Second
)

var (
	// ErrDisconnected is wrapped by the errors of what cannot wait for a
	// reconnect: an Open, Attach, Revive, List, Hello, HandOver, Signal,
	// Upgrade or Stop while the connection is down, or dropping under its
	// write, or one whose answer the drop took away. The client goes on
	// and reconnects; once it gave up, requests fail with its end
	// (ErrSidecarGone) instead.
	ErrDisconnected = errors.New("disconnected")
	// ErrDisconnectedQueueFull is wrapped by the error of a Write (or
	// Resize, Close, Detach) that would queue more than
	// ReconnectPolicy.QueueLimit while the connection is down.
	ErrDisconnectedQueueFull = errors.New("disconnected and the input queue is full")
)

// ReconnectPolicy makes a Client resume after its transport ends without
// Close. It needs a persistent sidecar (`ptyplex-sidecar --persist NAME`,
// through Persistent, or named in the Transport's argv), since only its
// terminals outlive the connection; Start checks that the sidecar
// announces "persist" in its HELLO (Reconnect turns Options.Hello on) and
// fails otherwise.
//
// While the connection is down terminals stay open: Read blocks (after
// the output already received), Write queues its bytes, and no EXIT is
// made up. The transport is started again after a delay that starts at
// InitialDelay and doubles up to MaxDelay, each drawn at random from the
// upper half of that range so that many hosts dropped at once do not
// return at once. Each attempt runs the handshake, ATTACHes every live
// terminal at the offset of the bytes it received (read or still
// buffered) with the credit its window has room for, then sends the
// queued frames in the order they were written, their INPUT paced as any
// Write's (CREDITs pass it meanwhile; other frames about terminals wait
// for the queue to be out).
//
// Only a connection whose handshake succeeded is resumed: the first one
// failing (the host unreachable, the transport killed before the sidecar
// answered) is Start's error, with no event, as in the npm package.
//
// Input is delivered at most once: a Write accepted while the transport
// was dying unnoticed (its bytes in the pipe or in ssh's buffers) can be
// lost with it, but nothing is ever sent twice. Keys written after the
// Disconnected event are queued and arrive in order. A Close or Detach is
// not lost that way: the resume sends a closed terminal's CLOSE again,
// and does not take back a terminal being detached (it ends with
// ErrDetached).
//
// Nor does it take back a terminal that another connection took over
// while this one was down (another host's Attach, even one that let it
// go again since): the server refuses the resume, and the terminal ends
// as one taken over while connected does, with an error wrapping
// ErrDetached, its program running on under the other host; the input
// queued for it is not delivered. The server tells each holder its
// holder generation, and the resume names the latest one the client was
// given (PROTOCOL.md, "Holder generations"); a server that gives none
// predates them, and the resume takes the terminal back from whoever
// holds it, as Attach does.
type ReconnectPolicy struct {
	// Attempts bounds the attempts after one drop: 0 means
	// DefaultReconnectAttempts, a negative number no bound. Once they
	// failed the client gives up (EventGaveUp): every terminal ends with
	// an error wrapping ErrSidecarGone and the last attempt's error.
	Attempts int
	// InitialDelay is the delay before the first attempt; 0 means
	// DefaultReconnectDelay. MaxDelay caps the doubling; 0 means
	// DefaultReconnectMaxDelay.
	InitialDelay, MaxDelay time.Duration
	// QueueLimit bounds, in bytes, the input queued for all terminals
	// while the connection is down (other frames queued then, such as
	// RESIZE, count with their size); 0 means DefaultQueueLimit, negative
	// means no queue: writes fail at once. A write past the limit fails
	// whole with an error wrapping ErrDisconnectedQueueFull; what was
	// queued before it is still delivered.
	QueueLimit int
	// KeepaliveInterval is how often a PING goes to a sidecar that
	// announces the keepalive, and KeepaliveTimeout how long the client
	// waits for any frame before it takes the connection for dead, kills
	// the transport and reconnects. A dead connection is noticed within
	// KeepaliveInterval+KeepaliveTimeout, 15 s with the defaults (5 s and
	// 10 s); TCP alone can take many minutes. 0 means the default; a
	// negative interval turns the keepalive off.
	KeepaliveInterval, KeepaliveTimeout time.Duration
	// OnEvent, if set, receives the connection's events, in order, from a
	// goroutine of their own: it may block or call the client (even
	// Close) without holding anything up but later events.
	OnEvent func(Event)
}

// policy is a ReconnectPolicy with its defaults filled in.
func (p ReconnectPolicy) withDefaults() ReconnectPolicy {
	if p.Attempts == 0 {
		p.Attempts = DefaultReconnectAttempts
	}
	if p.InitialDelay <= 0 {
		p.InitialDelay = DefaultReconnectDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultReconnectMaxDelay
	}
	if p.MaxDelay < p.InitialDelay {
		p.MaxDelay = p.InitialDelay
	}
	if p.QueueLimit == 0 {
		p.QueueLimit = DefaultQueueLimit
	}
	if p.KeepaliveInterval == 0 {
		p.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if p.KeepaliveTimeout <= 0 {
		p.KeepaliveTimeout = DefaultKeepaliveTimeout
	}
	return p
}

// DetectionBound is the longest a dead connection goes unnoticed under p:
// the keepalive checks once per interval for a frame newer than the
// timeout. 0 when the keepalive is off.
func (p ReconnectPolicy) DetectionBound() time.Duration {
	p = p.withDefaults()
	if p.KeepaliveInterval < 0 {
		return 0
	}
	return p.KeepaliveInterval + p.KeepaliveTimeout
}

// resumer is a reconnecting client's state. io serialises every frame
// about a terminal (INPUT, RESIZE, CLOSE, DETACH, CREDIT) with the
// connection going down and coming back, so that queued frames go out
// before any written later, and a CREDIT computed before a resume never
// reaches the connection after it.
type resumer struct {
	policy ReconnectPolicy
	events *eventQueue

	io     sync.Mutex
	down   bool          // frames queue
	queue  []queuedFrame // frames written while down, in order
	queued int           // their cost against QueueLimit
	gone   error         // the client ended: frames fail with this
	// flushing: a resume's flush sends the queue, paced (sendqueue.go);
	// frames about terminals wait for it to end, to keep their order.
	// flushed is closed when it ends.
	flushing bool
	flushed  chan struct{}

	ready    chan struct{} // closed by Start once the first handshake succeeded
	stop     chan struct{} // closed by Close: stop reconnecting
	stopOnce sync.Once
}

// stopping reports whether Close has begun.
func (c *Client) stopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// errClosedWhileDown ends a client closed while it was reconnecting; it
// counts as a clean end, as Close of a live connection does.
var errClosedWhileDown = fmt.Errorf("closed while disconnected: %w", errCleanEnd)

// permanentError is an attempt's failure that another attempt would
// repeat: the transport reaches a sidecar that cannot resume.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// reconnect runs after the connection dropped: it retries until a new
// connection has every terminal back, the attempts are spent, or Close.
// The error ends the client.
func (c *Client) reconnect(cause error) error {
	r := c.rc
	r.io.Lock()
	if c.stopping() {
		// A Stop sent its STOP while this connection was ending (it
		// holds io meanwhile), and the server's end is what ended it.
		r.io.Unlock()
		return cause
	}
	r.down = true
	r.io.Unlock()
	c.failPending(fmt.Errorf("%w: %w", ErrDisconnected, cause))
	dropped := time.Now()
	r.events.emit(Event{Kind: EventDisconnected, Err: cause})
	delay := r.policy.InitialDelay
	last := cause
	tried := 0
	for r.policy.Attempts < 0 || tried < r.policy.Attempts {
		// Jitter over the upper half: never sooner than half the delay,
		// so that a backoff still backs off.
		wait := delay/2 + rand.N(delay/2+1)
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-r.stop:
			timer.Stop()
			return errClosedWhileDown
		}
		delay = min(2*delay, r.policy.MaxDelay)
		tried++
		lost, err := c.redial()
		if err == nil {
			for _, e := range lost {
				r.events.emit(e)
			}
			r.events.emit(Event{Kind: EventReconnected, Attempt: tried, After: time.Since(dropped)})
			return nil
		}
		if c.stopping() {
			return errClosedWhileDown
		}
		// An attempt that got as far as resuming before its connection
		// died had let frames through: they queue again from here.
		r.io.Lock()
		r.down = true
		r.io.Unlock()
		c.failPending(fmt.Errorf("%w: %w", ErrDisconnected, err))
		last = err
		var perm permanentError
		if errors.As(err, &perm) {
			break
		}
		r.events.emit(Event{Kind: EventReconnectFailed, Attempt: tried, Err: err})
	}
	err := fmt.Errorf("gave up reconnecting after %d attempts: %w", tried, last)
	r.events.emit(Event{Kind: EventGaveUp, Err: err})
	return err
}

// failPending fails what waits for an answer the drop took away: opens,
// attaches, a handshake. An OPEN that reached the server before the drop
// leaves a terminal there that nobody holds (List shows it).
func (c *Client) failPending(err error) {
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]*pendingOpen{}
	if c.helloWait != nil {
		c.helloWait <- helloResult{err: err}
		c.helloWait = nil
	}
	c.mu.Unlock()
	for id, p := range pending {
		if p.abandoned {
			continue
		}
		p.result <- fmt.Errorf("open terminal %q: %w", id, err)
	}
}
