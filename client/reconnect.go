package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
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
	// reconnect: an Open, Attach, List or Hello while the connection is
	// down, or one whose answer the drop took away.
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
// queued frames in the order they were written.
//
// Input is delivered at most once: a Write accepted while the transport
// was dying unnoticed (its bytes in the pipe or in ssh's buffers) can be
// lost with it, but nothing is ever sent twice. Keys written after the
// Disconnected event are queued and arrive in order.
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

// EventKind says what an Event reports.
type EventKind int

const (
	// EventDisconnected: the transport ended without Close; Err says
	// why. Terminals stay open and writes queue from now on.
	EventDisconnected EventKind = iota + 1
	// EventReconnectFailed: attempt Attempt failed with Err; another
	// follows after a delay, or GaveUp after the last.
	EventReconnectFailed
	// EventLost: bytes of terminal TerminalID fell out of the server's
	// journal while the connection was down (Lost of them); its Read
	// continues with the server's repaint of the screen in their place.
	EventLost
	// EventReconnected: attempt Attempt succeeded, After the drop; every
	// terminal was reattached and the queued input sent.
	EventReconnected
	// EventGaveUp: the attempts are spent (Err is the last one's error);
	// the client ends and its terminals with it.
	EventGaveUp
)

func (k EventKind) String() string {
	switch k {
	case EventDisconnected:
		return "disconnected"
	case EventReconnectFailed:
		return "reconnect failed"
	case EventLost:
		return "lost"
	case EventReconnected:
		return "reconnected"
	case EventGaveUp:
		return "gave up"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is something that happened to a reconnecting Client's connection.
type Event struct {
	Kind       EventKind
	Err        error         // Disconnected, ReconnectFailed, GaveUp: why
	Attempt    int           // ReconnectFailed, Reconnected: which attempt, from 1
	After      time.Duration // Reconnected: time since the drop was noticed
	TerminalID string        // Lost
	Lost       uint64        // Lost: bytes the terminal's stream skips
}

func (e Event) String() string {
	switch e.Kind {
	case EventReconnected:
		return fmt.Sprintf("reconnected (attempt %d, after %v)", e.Attempt, e.After.Round(time.Millisecond))
	case EventLost:
		return fmt.Sprintf("terminal %q lost %d bytes", e.TerminalID, e.Lost)
	case EventReconnectFailed:
		return fmt.Sprintf("reconnect attempt %d failed: %v", e.Attempt, e.Err)
	}
	if e.Err != nil {
		return fmt.Sprintf("%v: %v", e.Kind, e.Err)
	}
	return e.Kind.String()
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
	down   bool     // frames queue
	queue  [][]byte // frames written while down, in order
	queued int      // their cost against QueueLimit
	gone   error    // the client ended: frames fail with this

	stop     chan struct{} // closed by Close: stop reconnecting
	stopOnce sync.Once
}

// liveness is one connection's keepalive: when a frame last arrived, and
// why the keepalive killed the transport, if it did.
type liveness struct {
	last   atomic.Int64 // unix nanoseconds
	killed atomic.Pointer[error]
}

func (l *liveness) seen() { l.last.Store(time.Now().UnixNano()) }

// handler is the Stream's frame handler: dispatch, with every frame
// counted as a sign of life.
func (c *Client) handler(lv *liveness) func(proto.Frame) error {
	if lv == nil {
		return c.dispatch
	}
	return func(f proto.Frame) error {
		lv.seen()
		return c.dispatch(f)
	}
}

// keepalive pings s every interval and kills it once no frame arrived
// for the timeout. Any frame counts, not only PONG: the sidecar queues its
// PONG behind the OUTPUT already in its writer, so under a flood the
// OUTPUT ahead of it proves the same thing sooner. PINGs are sent from a
// goroutine of their own, since a send to a hung transport blocks until
// the pipe drains, which it will not; the check does not wait for it.
func (c *Client) keepalive(s *Stream, lv *liveness) {
	p := c.rc.policy
	lv.seen()
	tick := time.NewTicker(p.KeepaliveInterval)
	defer tick.Stop()
	var sending atomic.Bool
	seq := 0
	for {
		select {
		case <-s.Done():
			return
		case <-tick.C:
		}
		if quiet := time.Since(time.Unix(0, lv.last.Load())); quiet > p.KeepaliveTimeout {
			err := fmt.Errorf("keepalive: no frame from the sidecar for %v (timeout %v)", quiet.Round(time.Millisecond), p.KeepaliveTimeout)
			lv.killed.Store(&err)
			// Killing the transport ends the stream like any drop;
			// reading it ends, the watch loop reconnects.
			s.Kill()
			s.CloseOutput()
			return
		}
		if sending.CompareAndSwap(false, true) {
			seq++
			body := proto.Marshal(struct {
				Seq int `json:"seq"`
			}{seq})
			go func() {
				defer sending.Store(false)
				s.Send(proto.AppendFrame(nil, proto.TypePing, body))
			}()
		}
	}
}

// startKeepalive starts the keepalive on s if the peer answers PING.
func (c *Client) startKeepalive(s *Stream, lv *liveness, peer proto.Hello) {
	if c.rc == nil || lv == nil || c.rc.policy.KeepaliveInterval < 0 || !peer.Has(proto.FeatureKeepalive) {
		return
	}
	go c.keepalive(s, lv)
}

// sendTerm sends a frame about a terminal. While the connection is down
// it is queued instead (cost counts against the limit); a send that fails
// because the connection is dropping is queued too, since the failed
// write delivered nothing (a frame cut short by the transport's death is
// dropped whole by the other side).
func (c *Client) sendTerm(frame []byte, cost int) error {
	if c.rc == nil {
		return c.stream().Send(frame)
	}
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	if r.gone != nil {
		return r.gone
	}
	if !r.down {
		err := c.stream().Send(frame)
		if err == nil || c.stopping() {
			return err
		}
	}
	limit := r.policy.QueueLimit
	if limit < 0 || r.queued+cost > limit {
		return fmt.Errorf("%w: %d bytes queued, %d more would pass the limit of %d (ReconnectPolicy.QueueLimit)",
			ErrDisconnectedQueueFull, r.queued, cost, max(limit, 0))
	}
	r.queue = append(r.queue, frame)
	r.queued += cost
	return nil
}

// grant sends CREDIT for n bytes read in epoch e. One that cannot be sent
// now is owed again; one from before a resume is dropped, because the
// resume's ATTACH already granted it.
func (c *Client) grant(t *Terminal, n int, e uint64) {
	frame := proto.AppendFrame(nil, proto.TypeCredit, proto.Marshal(proto.Credit{TerminalID: t.id, Bytes: uint64(n)}))
	if c.rc == nil {
		// A failed grant means the sidecar is gone; the reader
		// goroutine finishes the terminal with the reason.
		c.stream().Send(frame)
		return
	}
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	if !t.win.current(e) {
		return
	}
	if r.down || c.stream().Send(frame) != nil {
		t.win.ungrant(n, e)
	}
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

// redial starts the transport again, shakes hands, and resumes every
// live terminal on the new connection. It returns the Lost events of the
// terminals whose bytes fell out of the journal meanwhile.
func (c *Client) redial() ([]Event, error) {
	r := c.rc
	cmd, err := sidecarCommand(c.opts)
	if err != nil {
		return nil, permanentError{err}
	}
	lv := &liveness{}
	s, err := StartStream(cmd, StreamOptions{Handle: c.handler(lv), CheckData: c.checkOutput})
	if err != nil {
		return nil, err
	}
	s.lv = lv
	fail := func(err error) ([]Event, error) {
		s.Kill()
		s.CloseOutput()
		<-s.Done()
		return nil, err
	}
	d := c.opts.HelloTimeout
	if d <= 0 {
		d = DefaultHelloTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	go func() {
		select {
		case <-r.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	peer, err := c.hello(ctx, s)
	if err != nil {
		var he *HelloError
		if errors.As(err, &he) {
			err = permanentError{err}
		}
		return fail(err)
	}
	if !peer.Has(proto.FeaturePersist) {
		return fail(permanentError{fmt.Errorf("the sidecar reached by reconnecting does not keep terminals (no %q in its HELLO): "+
			"the transport must run `ptyplex-sidecar --persist NAME`", proto.FeaturePersist)})
	}

	// From here on s is the connection: Close closes it, and the watch
	// loop waits on it.
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		s.CloseInput()
		return fail(errClosedWhileDown)
	}
	c.cur.Store(s)
	live := make([]*Terminal, 0, len(c.live))
	for _, t := range c.live {
		live = append(live, t)
	}
	c.mu.Unlock()
	c.startKeepalive(s, lv, peer)

	waits := c.resume(s, live)
	var lost []Event
	timer := time.NewTimer(DefaultOpenTimeout)
	defer timer.Stop()
	for _, w := range waits {
		select {
		case err := <-w.done:
			if err == nil && w.lost > 0 {
				lost = append(lost, Event{Kind: EventLost, TerminalID: w.t.id, Lost: w.lost})
			}
			// A refusal finished that terminal with its reason; the
			// others go on.
		case <-s.Done():
			c.forgetResumes(waits)
			return nil, fmt.Errorf("the connection ended while reattaching: %w", streamCause(s, lv))
		case <-timer.C:
			c.forgetResumes(waits)
			return fail(fmt.Errorf("reattaching: no ATTACHED for terminal %q within %v", w.t.id, DefaultOpenTimeout))
		}
	}
	return lost, nil
}

// resumeWait is one terminal's ATTACH after a reconnect.
type resumeWait struct {
	t    *Terminal
	lost uint64     // set from ATTACHED; SNAPSHOT then settles it
	done chan error // capacity 1
}

// resume sends, in one go under io, an ATTACH for every live terminal
// and then the queued frames. The server handles a connection's frames in
// order and ATTACH takes effect at once, so the queued INPUT that follows
// finds its terminal attached. Queued frames written before the send
// failed are not sent again (at most once, as for any write).
func (c *Client) resume(s *Stream, live []*Terminal) []*resumeWait {
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	waits := make([]*resumeWait, 0, len(live))
	c.persist.mu.Lock()
	if c.persist.resuming == nil {
		c.persist.resuming = map[string]*resumeWait{}
	}
	for _, t := range live {
		w := &resumeWait{t: t, done: make(chan error, 1)}
		c.persist.resuming[t.id] = w
		waits = append(waits, w)
	}
	c.persist.mu.Unlock()
	for _, w := range waits {
		offset, credit := w.t.win.resetCredit()
		body := proto.Marshal(proto.Attach{TerminalID: w.t.id, Offset: offset, Credit: credit})
		if s.Send(proto.AppendFrame(nil, proto.TypeAttach, body)) != nil {
			// The new connection died already; the wait sees it.
			return waits
		}
	}
	for len(r.queue) > 0 {
		if s.Send(r.queue[0]) != nil {
			return waits
		}
		r.queue[0] = nil
		r.queue = r.queue[1:]
	}
	r.queue, r.queued, r.down = nil, 0, false
	return waits
}

func (c *Client) forgetResumes(waits []*resumeWait) {
	c.persist.mu.Lock()
	defer c.persist.mu.Unlock()
	for _, w := range waits {
		if c.persist.resuming[w.t.id] == w {
			delete(c.persist.resuming, w.t.id)
		}
	}
}

// resumeAttached handles ATTACHED for a resume; it reports whether it was
// one.
func (c *Client) resumeAttached(a proto.Attached) bool {
	c.persist.mu.Lock()
	defer c.persist.mu.Unlock()
	w := c.persist.resuming[a.TerminalID]
	if w == nil {
		return false
	}
	if a.Lost == 0 {
		delete(c.persist.resuming, a.TerminalID)
		w.done <- nil
		return true
	}
	// SNAPSHOT follows, before any OUTPUT.
	w.lost = a.Lost
	return true
}

// resumeSnapshot handles SNAPSHOT for a resume: the repaint goes into the
// terminal's stream, where the lost bytes would have been.
func (c *Client) resumeSnapshot(sn proto.Snapshot) bool {
	c.persist.mu.Lock()
	defer c.persist.mu.Unlock()
	w := c.persist.resuming[sn.TerminalID]
	if w == nil {
		return false
	}
	delete(c.persist.resuming, sn.TerminalID)
	w.t.win.resync([]byte(sn.Data), sn.Offset)
	w.done <- nil
	return true
}

// resumeRefused handles an ERROR about a terminal being resumed: the
// server no longer has it (it exited and was forgotten, or the server
// was restarted). The terminal ends with the server's reason.
func (c *Client) resumeRefused(m proto.Error) bool {
	c.persist.mu.Lock()
	w := c.persist.resuming[m.TerminalID]
	if w != nil {
		delete(c.persist.resuming, m.TerminalID)
	}
	c.persist.mu.Unlock()
	if w == nil {
		return false
	}
	err := fmt.Errorf("terminal %q: %w: reattaching after a reconnect: %s", m.TerminalID, ErrSidecarGone, m.Message)
	c.mu.Lock()
	if c.live[m.TerminalID] == w.t {
		delete(c.live, m.TerminalID)
	}
	c.mu.Unlock()
	w.t.finish(ExitStatus{Code: -1}, err)
	w.done <- err
	return true
}

// eventQueue hands events to OnEvent in order from one goroutine, so that
// a slow or blocking callback never holds up the client.
type eventQueue struct {
	fn   func(Event)
	mu   sync.Mutex
	q    []Event
	wake chan struct{}
}

func newEventQueue(fn func(Event)) *eventQueue {
	if fn == nil {
		return nil
	}
	e := &eventQueue{fn: fn, wake: make(chan struct{}, 1)}
	go e.run()
	return e
}

func (e *eventQueue) emit(ev Event) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run delivers events for the life of the process's use of the client;
// it ends after delivering GaveUp, the last event there can be, or when
// the client ends (close: see end).
func (e *eventQueue) run() {
	for range e.wake {
		for {
			e.mu.Lock()
			if len(e.q) == 0 {
				e.mu.Unlock()
				break
			}
			ev := e.q[0]
			e.q = e.q[1:]
			e.mu.Unlock()
			e.fn(ev)
		}
	}
}

// close ends run once the queued events were delivered.
func (e *eventQueue) close() {
	if e != nil {
		close(e.wake)
	}
}
