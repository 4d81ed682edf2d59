package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptyplex/ptyplex/proto"
)

// The send path of frames about a terminal, which queue while a
// reconnecting client is down, and the credit it grants.

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
	r.waitFlushedLocked()
	if r.gone != nil {
		return r.gone
	}
	if !r.down {
		s := c.stream()
		err := s.Send(frame)
		if err == nil || c.stopping() {
			return err
		}
		c.dropping(s, err)
	}
	if err := r.room(cost); err != nil {
		return err
	}
	input := 0
	if len(frame) > 4 && proto.Type(frame[4]) == proto.TypeInput {
		input = cost
	}
	r.queue = append(r.queue, queuedFrame{frame: frame, cost: cost, input: input})
	r.queued += cost
	return nil
}

// queuedFrame is a frame written while the connection was down.
type queuedFrame struct {
	frame []byte
	cost  int // against QueueLimit
	input int // INPUT bytes it carries (0 for other frames): what the flush paces
}

// waitFlushedLocked waits until no resume's flush is under way; it is
// called, and returns, with io held.
func (r *resumer) waitFlushedLocked() {
	for r.flushing {
		flushed := r.flushed
		r.io.Unlock()
		<-flushed
		r.io.Lock()
	}
}

// startFlush begins sending the queue on s, the connection a resume has
// just attached every terminal on; under io. The queue goes out paced as
// any INPUT (pace.go), from a goroutine, without io held while it waits:
// a CREDIT, which takes io, must be able to pass the queued INPUT, or a
// queued paste into an echoing terminal would wait for ever for the
// credit that lets its child read on. Frames about terminals written
// meanwhile wait for the flush (waitFlushedLocked), after the queue.
func (c *Client) startFlush(s *Stream) {
	r := c.rc
	if len(r.queue) == 0 {
		r.queue, r.queued = nil, 0
		return
	}
	r.flushing, r.flushed = true, make(chan struct{})
	go c.flush(s, r.flushed)
}

// flush sends the queue on s, paced, until it is empty or s is not the
// connection any more (a drop: what is left goes out after the next
// resume), or Close. A frame leaves the queue only once its turn came: one
// whose wait a drop interrupted was never written and goes out after the
// next resume. So does one whose write failed, which delivered nothing
// whole (as sendTerm queues such a frame). io is not held while the frame
// waits or is written: a CREDIT, an Open, a List must not wait for the
// child that holds the queue up. It closes flushed as it ends.
func (c *Client) flush(s *Stream, flushed chan struct{}) {
	r := c.rc
	defer func() {
		r.io.Lock()
		if r.flushed == flushed {
			// Not the flush of a dropped connection that a newer
			// resume's took over from.
			r.flushing = false
		}
		close(flushed)
		r.io.Unlock()
	}()
	ping := func(frame []byte) (*Stream, error) { return s, s.Send(frame) }
	for {
		q, ok := c.queueHead(s, false)
		if !ok {
			return
		}
		if q.input > 0 && !c.admit(s, q.input, r.stop, ping) {
			return
		}
		// Only this flush takes frames off the queue while it runs
		// on the connection: the head is still q.
		if _, ok := c.queueHead(s, true); !ok {
			return
		}
		if err := s.Send(q.frame); err != nil {
			c.unsent(q, flushed)
			if !c.stopping() {
				c.dropping(s, err)
			}
			return
		}
	}
}

// queueHead returns the first queued frame while the flush on s goes on
// (s is the connection, up, and frames are queued), taking it off the
// queue if take; ok is false once it ends.
func (c *Client) queueHead(s *Stream, take bool) (q queuedFrame, ok bool) {
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	if len(r.queue) == 0 {
		r.queue, r.queued = nil, 0
		return q, false
	}
	if r.down || r.gone != nil || c.stream() != s {
		return q, false
	}
	q = r.queue[0]
	if take {
		r.queue[0] = queuedFrame{}
		r.queue = r.queue[1:]
		r.queued -= q.cost
	}
	return q, true
}

// unsent puts back at the head of the queue a frame the flush whose
// flushed this is took off and could not write. Nothing was queued
// meanwhile (frames about terminals wait for the flush), unless a newer
// resume's flush has begun: the frame is lost then, as one written to a
// connection dying unnoticed is.
func (c *Client) unsent(q queuedFrame, flushed chan struct{}) {
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	if r.flushed != flushed || r.gone != nil {
		return
	}
	r.queue = append([]queuedFrame{q}, r.queue...)
	r.queued += q.cost
}

// room says whether cost more bytes fit the queue; under io.
func (r *resumer) room(cost int) error {
	limit := r.policy.QueueLimit
	if limit < 0 || r.queued+cost > limit {
		return fmt.Errorf("%w: %d bytes queued, %d more would pass the limit of %d (ReconnectPolicy.QueueLimit)",
			ErrDisconnectedQueueFull, r.queued, cost, max(limit, 0))
	}
	return nil
}

// queueInput queues the rest of one Write as INPUT frames, all of it or
// none, while a reconnecting client is down: a write past the limit fails
// whole, rather than leaving the child the first part of a paste. It
// reports false, queuing nothing, while the connection is up; the write
// is then sent a frame at a time.
func (c *Client) queueInput(id string, p []byte) (bool, error) {
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	r.waitFlushedLocked()
	if r.gone != nil {
		return true, r.gone
	}
	if !r.down {
		return false, nil
	}
	if err := r.room(len(p)); err != nil {
		return true, err
	}
	for len(p) > 0 {
		chunk := p[:inputChunk(p)]
		frame := proto.AppendDataFrame(nil, proto.TypeInput, id, chunk)
		r.queue = append(r.queue, queuedFrame{frame: frame, cost: len(chunk), input: len(chunk)})
		r.queued += len(chunk)
		p = p[len(chunk):]
	}
	return true, nil
}

// sendNow sends a frame about a terminal that waits for an answer, on the
// current connection, and returns that connection. It does not queue:
// while a reconnecting client is down it fails with ErrDisconnected.
func (c *Client) sendNow(frame []byte) (*Stream, error) {
	if c.rc == nil {
		s := c.stream()
		return s, s.Send(frame)
	}
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	r.waitFlushedLocked()
	return c.sendUpLocked(context.Background(), frame)
}

// sendUpLocked sends frame on a reconnecting client's current connection,
// under the resumer's io, and returns that connection: it fails with the
// client's end once it gave up, with ErrDisconnected while it is down or
// when the connection drops under the write.
func (c *Client) sendUpLocked(ctx context.Context, frame []byte) (*Stream, error) {
	r := c.rc
	switch {
	case r.gone != nil:
		return nil, r.gone
	case r.down:
		return nil, fmt.Errorf("%w: reconnecting", ErrDisconnected)
	}
	s := c.stream()
	if err := s.SendContext(ctx, frame); err != nil {
		return nil, c.dropping(s, err)
	}
	return s, nil
}

// resumable reports whether s is the connection of a reconnecting client
// that is running: its first handshake succeeded (Start's failing one is
// Start's error) and s is its current connection (not a reconnect
// attempt's).
func (c *Client) resumable(s *Stream) bool {
	if c.rc == nil || s != c.stream() {
		return false
	}
	select {
	case <-c.rc.ready:
		return true
	default:
		return false
	}
}

// dropping is the error of a request whose write to connection s failed.
// On a reconnecting client that has neither ended nor begun to close, a
// connection that fails under a write is dropping: the request fails as
// one made a moment later would, with ErrDisconnected, and not with the
// ErrSidecarGone of a client that has ended. s is killed, as the
// keepalive kills a hung one, so that the drop is noticed even when the
// transport keeps its output open after its input failed; the frames
// that queue meanwhile would otherwise wait for a reconnect that never
// comes. It may be called with the resumer's io held.
func (c *Client) dropping(s *Stream, err error) error {
	if c.rc == nil || !errors.Is(err, ErrSidecarGone) {
		return err
	}
	c.mu.Lock()
	over := c.closing || c.ended != nil
	c.mu.Unlock()
	if over {
		return err
	}
	select {
	case <-s.Done():
		// It had ended (its exit is the error): the drop says so.
	default:
		if s.lv != nil {
			cause := fmt.Errorf("writing to the connection failed: %w", err)
			s.lv.killed.CompareAndSwap(nil, &cause)
		}
	}
	s.Kill()
	s.CloseOutput()
	return fmt.Errorf("%w: %v", ErrDisconnected, err)
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
