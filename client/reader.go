package client

import (
	"errors"
	"fmt"

	"github.com/ptyplex/ptyplex/proto"
)

// watch waits for the end of the stream (the Stream's reader goroutine,
// which calls dispatch for every frame, is the client's only reader), then
// fails whatever is still pending or live. A stream that turned out corrupt
// has already been abandoned by then: its writes fail and a sidecar we
// started was killed.
//
// A reconnecting client (Options.Reconnect) does not end when a stream
// does, unless Close began: it reconnects, and waits on the next stream.
func (c *Client) watch() {
	defer close(c.done)
	for {
		s := c.stream()
		<-s.Done()
		cause := streamCause(s, s.lv)
		if c.rc != nil {
			// Only a connection whose handshake succeeded is resumed:
			// a first one that failed is Start's error (Start closes
			// the client then).
			select {
			case <-c.rc.ready:
			case <-c.rc.stop:
			}
		}
		if c.rc == nil || c.stopping() {
			c.end(cause)
			return
		}
		if err := c.reconnect(cause); err != nil {
			c.end(err)
			return
		}
	}
}

// streamCause says why s ended: its read error, the keepalive's verdict,
// or the process's exit.
func streamCause(s *Stream, lv *liveness) error {
	if lv != nil {
		if k := lv.killed.Load(); k != nil {
			return *k
		}
	}
	cause := s.ReadErr()
	if cause == nil {
		cause = errCleanEnd
		if err := s.WaitErr(); err != nil {
			cause = fmt.Errorf("sidecar exited: %v", err)
			if name := transportName(s); name != "" {
				// ssh's status says little, its last line (Connection
				// refused) the rest.
				said := ""
				if l := transportSaid(s); l != "" {
					said = fmt.Sprintf(": %s", l)
				}
				cause = fmt.Errorf("the transport (%s) exited: %v%s", name, err, said)
			}
		}
	}
	return cause
}

// end records why the stream ended, fails every pending open and finishes
// every live terminal.
func (c *Client) end(cause error) {
	if c.rc != nil {
		c.rc.io.Lock()
		c.rc.gone = fmt.Errorf("%w: %w", ErrSidecarGone, cause)
		c.rc.queue, c.rc.queued = nil, 0
		c.rc.io.Unlock()
		defer c.rc.events.close()
	}
	c.mu.Lock()
	if c.ended == nil {
		c.ended = fmt.Errorf("%w: %w", ErrSidecarGone, cause)
	}
	gone := c.ended
	if c.closing && errors.Is(cause, errCleanEnd) {
		// Our own Close (or Stop), and the connection ended cleanly:
		// the terminals still here did not die with a sidecar; this
		// connection let them go (a persistent server keeps them).
		gone = ErrClientClosed
		c.cleanEnd = true
	}
	pending, live := c.pending, c.live
	c.pending, c.live = map[string]*pendingOpen{}, map[string]*Terminal{}
	c.mu.Unlock()
	for id, p := range pending {
		p.result <- fmt.Errorf("open terminal %q: %w", id, gone)
	}
	for id, t := range live {
		t.finish(ExitStatus{Code: -1}, fmt.Errorf("terminal %q: %w", id, gone))
	}
}

// dispatch acts on one sidecar frame. An error means the stream is not
// speaking the protocol and must be abandoned.
func (c *Client) dispatch(f proto.Frame) error {
	switch f.Type {
	case proto.TypeOutput:
		id, data, err := proto.ParseData(f.Body)
		if err != nil {
			return fmt.Errorf("%w: OUTPUT: %v", proto.ErrCorrupt, err)
		}
		c.mu.Lock()
		t := c.live[id]
		c.mu.Unlock()
		if t == nil {
			return fmt.Errorf("%w: OUTPUT for terminal %q, which is not open", ErrProtocol, id)
		}
		if err := t.win.push(data); err != nil {
			return fmt.Errorf("%w: terminal %q: %v", ErrProtocol, id, err)
		}
	case proto.TypeOpened:
		var m proto.Opened
		if err := unmarshal(f, &m); err != nil {
			return err
		}
		if err := c.opened(m); err != nil {
			return err
		}
	case proto.TypeError:
		var m proto.Error
		if err := unmarshal(f, &m); err != nil {
			return err
		}
		c.refused(m)
	case proto.TypeExit:
		var m proto.Exit
		if err := unmarshal(f, &m); err != nil {
			return err
		}
		if err := c.exited(m); err != nil {
			return err
		}
	case proto.TypeHelloReply:
		return c.helloReply(f.Body)
	case proto.TypePong:
		c.ponged(f.Body)
	case proto.TypeForegroundInfo:
		var m proto.ForegroundInfo
		if err := unmarshal(f, &m); err != nil {
			return err
		}
		c.mu.Lock()
		t := c.live[m.TerminalID]
		c.mu.Unlock()
		if t != nil {
			// The answer a Signal waits for (signal.go).
			t.foregroundAnswered()
		}
	default:
		// The persistent server's frames (persist.go); other unknown
		// frame types are skipped, as the protocol asks.
		return c.dispatchPersist(f)
	}
	return nil
}

// checkOutput refuses an OUTPUT frame at its header, before its payload is
// read, when it is for a terminal that is not open or larger than the
// credit the terminal has left: a peer may announce a frame of 16 MiB and
// send it one byte at a time, and none of it is to be buffered. dispatch
// would refuse the same frame once whole, with the same error.
func (c *Client) checkOutput(t proto.Type, id string, n int) error {
	if t != proto.TypeOutput {
		return nil
	}
	c.mu.Lock()
	term := c.live[id]
	c.mu.Unlock()
	if term == nil {
		return fmt.Errorf("%w: OUTPUT for terminal %q, which is not open", ErrProtocol, id)
	}
	if err := term.win.check(n); err != nil {
		return fmt.Errorf("%w: terminal %q: %v", ErrProtocol, id, err)
	}
	return nil
}

func unmarshal(f proto.Frame, v any) error {
	if err := proto.DecodeBody(f.Body, v); err != nil {
		return fmt.Errorf("%w: %s body: %v", proto.ErrCorrupt, f.Type, err)
	}
	return nil
}

// opened moves a pending open to the live terminals. It registers the
// terminal before returning, so the OUTPUT frames that follow find it.
func (c *Client) opened(m proto.Opened) error {
	c.mu.Lock()
	p := c.pending[m.TerminalID]
	if p == nil {
		c.mu.Unlock()
		return fmt.Errorf("%w: OPENED for terminal %q, which was not being opened", ErrProtocol, m.TerminalID)
	}
	delete(c.pending, m.TerminalID)
	p.t.pid = m.PID
	p.t.features = m.Features
	p.t.heldAt(m.HoldGen)
	c.live[m.TerminalID] = p.t
	abandoned := p.abandoned
	if !abandoned {
		p.result <- nil
	}
	c.mu.Unlock()
	if abandoned {
		// Its caller timed out: end it (or, revived, let it run on
		// unheld). The id stays reserved until its EXIT (or DETACHED),
		// because the sidecar still holds it too. The send runs apart
		// so that this goroutine never waits on stdin.
		p.t.win.drop()
		if p.detach {
			go p.t.Detach()
		} else {
			go p.t.Close()
		}
	}
	return nil
}

// refused handles ERROR: the answer to a pending open, or a report about a
// live terminal (a SIGNAL it refused, INPUT it had to drop).
func (c *Client) refused(m proto.Error) {
	if m.TerminalID != "" && c.resumeRefused(m) {
		return
	}
	if m.TerminalID == "" && c.upgradeAnswered(upgradeAnswer{err: &ServerError{Request: proto.TypeUpgrade, Message: m.Message}}) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.TerminalID == "" && c.helloWait != nil {
		// Not about a terminal: a sidecar refusing the handshake.
		c.helloWait <- helloResult{err: fmt.Errorf("the sidecar answered HELLO with ERROR %q", m.Message)}
		c.helloWait = nil
		return
	}
	if p := c.pending[m.TerminalID]; p != nil {
		delete(c.pending, m.TerminalID)
		p.result <- &OpenError{TerminalID: m.TerminalID, Message: m.Message}
		if p.abandoned {
			// Nobody waits to forget an ATTACH of it.
			c.persist.mu.Lock()
			if c.persist.attaching[m.TerminalID] == p {
				delete(c.persist.attaching, m.TerminalID)
			}
			c.persist.mu.Unlock()
		}
		return
	}
	if t := c.live[m.TerminalID]; t != nil && !t.handOverRefused(m.Message) && !t.signalRefused(m.Message) {
		t.dropped(m.Message)
	}
}

// exited finishes a live terminal with its EXIT status.
func (c *Client) exited(m proto.Exit) error {
	c.mu.Lock()
	t := c.live[m.TerminalID]
	delete(c.live, m.TerminalID)
	c.mu.Unlock()
	if t == nil {
		// A second EXIT, or one for a terminal never opened: the peer's
		// idea of which terminals exist is not ours any more.
		return fmt.Errorf("%w: EXIT for terminal %q, which is not open", ErrProtocol, m.TerminalID)
	}
	if m.ExitCode == nil {
		t.finish(ExitStatus{Code: -1, Signal: m.Signal}, fmt.Errorf("terminal %q: %w", m.TerminalID, ErrExitUnknown))
		return nil
	}
	t.finish(ExitStatus{Code: *m.ExitCode, Signal: m.Signal}, nil)
	return nil
}
