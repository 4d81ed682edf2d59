package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Starting the transport again after a drop.

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
	c.persist.mu.Lock()
	c.persist.late = 0 // those LISTs went out on the old connection
	c.persist.mu.Unlock()
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
