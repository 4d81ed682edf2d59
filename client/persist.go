package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ptyplex/ptyplex/proto"
)

// The persistent sidecar (`ptyplex-sidecar --persist NAME`, see
// docs/persist.md) keeps its terminals when the host's connection ends.
// A host that saves each terminal's Offset can die, start again, and
// Attach at those offsets to receive exactly the bytes it has not read.

// ErrDetached is wrapped by the error of a terminal that another
// connection took over, or that was detached with Detach.
var ErrDetached = errors.New("terminal detached")

// Persistent starts `ptyplex-sidecar --persist name` (which starts the
// server name in the background if none runs) and returns a Client
// speaking to it. Close ends only this connection: the terminals go on.
//
// It runs the local sidecar only. With a Transport the transport's argv
// runs the sidecar, so it names the persistent one itself ({"ssh", "-T",
// "host", "ptyplex-sidecar --persist NAME"}) and Start is the call; the
// client learns that the peer is persistent from "persist" in its HELLO
// (Options.Hello, which Options.Reconnect turns on). Persistent with a
// Transport is refused rather than quietly running a plain sidecar there.
func Persistent(name string, opts Options) (*Client, error) {
	if len(opts.Transport) > 0 || opts.Install != nil {
		return nil, fmt.Errorf("persistent %q: with a Transport, name the persistent sidecar in its argv "+
			"(e.g. {\"ssh\", \"-T\", \"host\", \"ptyplex-sidecar --persist %s\"}; InstallOptions.Args for Install) and call Start", name, name)
	}
	opts.Args = append([]string{"--persist", name}, opts.Args...)
	c, err := Start(opts)
	if err != nil {
		return nil, err
	}
	c.server = name
	return c, nil
}

// persistState is the client's share of LIST and ATTACH.
type persistState struct {
	// listTurn holds a token while a LIST is in flight, one at a time:
	// LISTED carries no request id. A channel, so that a List waiting
	// its turn behind one that waits long (a plain sidecar never
	// answers) still ends with its own ctx.
	listTurn chan struct{}
	mu       sync.Mutex
	listed   chan proto.Listed // the waiting List, if any
	// late counts the LISTs of this connection whose List gave up
	// waiting: LISTED names no request, and the server answers in
	// order, so the next LISTEDs are theirs, not a later List's.
	late int
	// attaching holds ATTACHes waiting for their ATTACHED (and SNAPSHOT);
	// the id is also reserved in Client.pending, so that an ERROR about
	// it settles the wait.
	attaching map[string]*pendingOpen
	// resuming holds the ATTACHes of live terminals after a reconnect
	// (reconnect.go).
	resuming map[string]*resumeWait
}

// List returns every terminal of the persistent server, attached or not.
// A plain sidecar does not answer; List then fails when ctx ends.
func (c *Client) List(ctx context.Context) ([]proto.ListedTerminal, error) {
	select {
	case c.persist.listTurn <- struct{}{}:
	default:
		select {
		case c.persist.listTurn <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("list terminals: waiting for another List to end: %w", ctx.Err())
		}
	}
	defer func() { <-c.persist.listTurn }()
	if c.disconnected() {
		return nil, fmt.Errorf("list terminals: %w: reconnecting", ErrDisconnected)
	}
	s := c.stream()
	ch := make(chan proto.Listed, 1)
	c.persist.mu.Lock()
	c.persist.listed = ch
	c.persist.mu.Unlock()
	defer func() {
		c.persist.mu.Lock()
		c.persist.listed = nil
		c.persist.mu.Unlock()
	}()
	if err := s.SendContext(ctx, proto.AppendFrame(nil, proto.TypeList, []byte("{}"))); err != nil {
		return nil, fmt.Errorf("list terminals: %w", c.dropping(s, err))
	}
	select {
	case l := <-ch:
		return l.Terminals, nil
	case <-s.Done():
		if c.rc != nil {
			return nil, fmt.Errorf("list terminals: %w", ErrDisconnected)
		}
		<-c.done
		err := c.Err()
		if err == nil {
			// A clean end: our own Close (or Stop).
			err = ErrClientClosed
		}
		return nil, fmt.Errorf("list terminals: %w", err)
	case <-ctx.Done():
	}
	c.persist.mu.Lock()
	select {
	case l := <-ch:
		// Answered as it gave up: take the answer.
		c.persist.mu.Unlock()
		return l.Terminals, nil
	default:
	}
	c.persist.late++
	c.persist.mu.Unlock()
	return nil, fmt.Errorf("list terminals: no answer (is this a persistent sidecar?): %w", ctx.Err())
}

// Attach takes terminal id over (from another connection, if one holds
// it) and returns it as a Terminal whose Read continues at offset: the
// number of its bytes the host has already read (a saved Offset). When
// some of them fell out of the server's journal, Replay says how many,
// and the terminal first delivers nothing of the lost range; its
// Snapshot repaints the screen instead, and Offset continues after it.
// A refusal (unknown id, offset past what was produced) is an
// *OpenError with the server's message.
//
// With AttachOptions{View: true} it attaches as a viewer instead
// (viewers.go): the output only, no takeover.
//
// ATTACHED does not carry the child's pid: Attach asks List for it, as
// the npm package's attach does, so that Pid reports it (0 if that
// answer did not come within ctx).
func (c *Client) Attach(ctx context.Context, id string, offset uint64, opts ...AttachOptions) (*Terminal, error) {
	var o AttachOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("attach terminal %q: %w", id, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultOpenTimeout)
		defer cancel()
	}
	p, s, err := c.register("attach terminal", OpenOptions{ID: id, Window: DefaultWindow})
	if err != nil {
		return nil, err
	}
	p.t.win.setOffset(offset)
	c.persist.mu.Lock()
	if c.persist.attaching == nil {
		c.persist.attaching = map[string]*pendingOpen{}
	}
	c.persist.attaching[id] = p
	c.persist.mu.Unlock()
	forget := func() {
		c.persist.mu.Lock()
		if c.persist.attaching[id] == p {
			delete(c.persist.attaching, id)
		}
		c.persist.mu.Unlock()
		c.mu.Lock()
		if c.pending[id] == p {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	credit := uint64(DefaultWindow)
	a := proto.Attach{Credit: &credit, Offset: offset, TerminalID: id}
	if o.View {
		a.Mode = proto.AttachView
	}
	body := proto.Marshal(a)
	if err := s.SendContext(ctx, proto.AppendFrame(nil, proto.TypeAttach, body)); err != nil {
		forget()
		return nil, fmt.Errorf("attach terminal %q: %w", id, c.dropping(s, err))
	}
	select {
	case err := <-p.result:
		forget()
		if err != nil {
			return nil, err
		}
		c.learnPid(ctx, p.t)
		return p.t, nil
	case <-ctx.Done():
	}
	// The ATTACH was sent: the server may yet attach the terminal to this
	// connection, and its frames must then not be taken for a peer that
	// breaks the protocol. The attach stays pending, marked abandoned:
	// once ATTACHED arrives the terminal is detached again (attached),
	// its output dropped meanwhile.
	c.mu.Lock()
	if c.pending[id] == p {
		p.abandoned = true
		c.mu.Unlock()
		return nil, fmt.Errorf("attach terminal %q: no answer from the sidecar: %w", id, ctx.Err())
	}
	c.mu.Unlock()
	// Answered while we were giving up; take the answer.
	forget()
	if err := <-p.result; err != nil {
		return nil, err
	}
	return p.t, nil
}

// learnPid sets an attached terminal's pid from the server's list, before
// the terminal is handed to the caller (Pid reads it without a lock).
func (c *Client) learnPid(ctx context.Context, t *Terminal) {
	l, err := c.List(ctx)
	if err != nil {
		return
	}
	for _, e := range l {
		if e.TerminalID == t.id {
			t.pid = e.PID
			return
		}
	}
}

// Offset is the offset of the next byte Read returns, counted from the
// terminal's OPEN: save it to Attach at it after a restart.
//
// After a reconnect (Options.Reconnect) that found bytes lost, Read
// delivers the server's repaint in their place; Offset stays put while
// the repaint is read and then jumps past the lost range.
func (t *Terminal) Offset() uint64 {
	pos, _ := t.win.offsets()
	return pos
}

// Replay returns how the Attach that made t began: the offset asked for,
// how many bytes from it had fallen out of the journal, and (when that is
// not 0) the server's repaint of the screen, as escape sequences to write
// to the emulator before the output Read returns.
func (t *Terminal) Replay() (offset, lost uint64, snapshot string) {
	return t.attached.Offset, t.attached.Lost, t.snapshot
}

// Detach lets the terminal go on without this connection; t finishes with
// an error wrapping ErrDetached once the server confirms. A terminal that
// has finished already is not this connection's to detach: Detach fails
// then, and sends nothing. So does a terminal of a plain sidecar (its
// OPENED lists features, "persist" not among them), which would drop the
// DETACH unanswered: the error wraps errors.ErrUnsupported.
func (t *Terminal) Detach() error {
	select {
	case <-t.done:
		_, err := t.Wait()
		if err == nil {
			err = errors.New("the terminal has exited")
		}
		return fmt.Errorf("terminal %q: detach: %w", t.id, err)
	default:
	}
	if err := t.refuseNotPersistent(); err != nil {
		return fmt.Errorf("terminal %q: detach: %w", t.id, err)
	}
	frame := proto.AppendFrame(nil, proto.TypeDetach, proto.Marshal(proto.Close{TerminalID: t.id}))
	t.mu.Lock()
	t.detaching = true
	t.mu.Unlock()
	if err := t.c.sendTerm(frame, len(frame)); err != nil {
		t.mu.Lock()
		t.detaching = false
		t.mu.Unlock()
		return fmt.Errorf("terminal %q: detach: %w", t.id, err)
	}
	return nil
}

// dispatchPersist handles the persistent server's frames.
func (c *Client) dispatchPersist(f proto.Frame) error {
	switch f.Type {
	case proto.TypeListed:
		var l proto.Listed
		if err := unmarshal(f, &l); err != nil {
			return err
		}
		c.persist.mu.Lock()
		if c.persist.late > 0 {
			// The answer to a List that gave up.
			c.persist.late--
		} else if c.persist.listed != nil {
			select {
			case c.persist.listed <- l:
			default:
			}
		}
		c.persist.mu.Unlock()
	case proto.TypeAttached:
		var a proto.Attached
		if err := unmarshal(f, &a); err != nil {
			return err
		}
		if c.resumeAttached(a) {
			return nil
		}
		c.persist.mu.Lock()
		p := c.persist.attaching[a.TerminalID]
		c.persist.mu.Unlock()
		if p == nil {
			c.liveAttached(a)
			return nil
		}
		p.t.attached = a
		p.t.features = c.attachedFeatures()
		p.t.viewAttached(a)
		if a.Lost == 0 {
			c.attached(p)
		}
		// Otherwise SNAPSHOT follows, before any OUTPUT.
	case proto.TypeSnapshot:
		var s proto.Snapshot
		if err := unmarshal(f, &s); err != nil {
			return err
		}
		if c.resumeSnapshot(s) {
			return nil
		}
		c.persist.mu.Lock()
		p := c.persist.attaching[s.TerminalID]
		c.persist.mu.Unlock()
		if p == nil {
			c.liveSnapshot(s)
			return nil
		}
		p.t.snapshot = s.Data
		p.t.win.setOffset(s.Offset)
		c.attached(p)
	case proto.TypeUpgrading:
		var u proto.Upgrading
		if err := unmarshal(f, &u); err != nil {
			return err
		}
		c.upgradeAnswered(upgradeAnswer{up: &u})
	case proto.TypeDetached:
		var d proto.Detached
		if err := unmarshal(f, &d); err != nil {
			return err
		}
		c.mu.Lock()
		t := c.live[d.TerminalID]
		delete(c.live, d.TerminalID)
		c.mu.Unlock()
		if t != nil {
			t.finish(ExitStatus{Code: -1}, fmt.Errorf("terminal %q: %w: %s", d.TerminalID, ErrDetached, d.Reason))
		}
	}
	return nil
}

// refuseNotPersistent is the error of a request only a persistent server
// answers (DETACH), for a terminal whose sidecar is known to be a plain
// one: it listed its features without "persist". A sidecar that lists
// none (older than the features) is given the benefit of the doubt.
func (t *Terminal) refuseNotPersistent() error {
	if len(t.features) == 0 || slices.Contains(t.features, proto.FeaturePersist) {
		return nil
	}
	return fmt.Errorf("%w: the sidecar keeps no terminal apart from its connection (no %q among its features), and drops DETACH unanswered", errors.ErrUnsupported, proto.FeaturePersist)
}

// attachedFeatures are the features of a terminal taken by ATTACH, whose
// answer lists none: the server's HELLO's when it answered one, and
// otherwise SIGNAL, FOREGROUND and PERSIST, which every persistent server
// serves (it answers ATTACH, so it is one).
func (c *Client) attachedFeatures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer != nil {
		return c.peer.Features
	}
	return []string{proto.FeatureSignal, proto.FeatureForeground, proto.FeaturePersist}
}

// attached moves a pending ATTACH to the live terminals before the OUTPUT
// that follows is dispatched.
func (c *Client) attached(p *pendingOpen) {
	c.persist.mu.Lock()
	delete(c.persist.attaching, p.t.id)
	c.persist.mu.Unlock()
	c.mu.Lock()
	if c.pending[p.t.id] != p {
		c.mu.Unlock()
		return
	}
	delete(c.pending, p.t.id)
	c.live[p.t.id] = p.t
	abandoned := p.abandoned
	if !abandoned {
		p.result <- nil
	}
	c.mu.Unlock()
	if abandoned {
		// Its caller gave up waiting: let the terminal go on without
		// this connection. Until DETACHED its output is dropped.
		p.t.win.drop()
		go p.t.Detach()
	}
}

// openBody encodes OPEN, with the persistent server's fields when set.
func openBody(msg proto.Open, o OpenOptions) []byte {
	if o.Journal == 0 && o.Detached == "" && o.OrphanMs == 0 {
		return proto.Marshal(msg)
	}
	return proto.Marshal(struct {
		proto.Open
		Detached string `json:"detached,omitempty"`
		Journal  int    `json:"journal,omitempty"`
		OrphanMs int64  `json:"orphanMs,omitempty"`
	}{msg, o.Detached, o.Journal, o.OrphanMs})
}
