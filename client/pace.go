package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// The pace of INPUT on a connection.
//
// A sidecar holding 16 MiB of INPUT for a terminal stops reading frames
// until the child reads some (PROTOCOL.md, INPUT); meanwhile it reads on
// only up to 1 MiB, for the CREDITs among those frames. A child that
// echoes (cat, a shell) reads its input only while its output has credit,
// and the CREDIT that gives it more is sent as the caller reads that
// output: behind all the INPUT written until then, to that terminal or
// to any other on the connection. A host that writes INPUT as fast as
// the pipe takes it always has more than 1 MiB of it between the frame
// the sidecar holds and that CREDIT, and the two wait for each other for
// ever. Letting the grant have the pipe before the next INPUT frame is
// not enough: the INPUT written before the grant was due is already in
// the way. Nor is pacing the credited terminals alone: a paste into a
// terminal without credit, on the same connection, fills the look-ahead
// just as well.
//
// So every terminal's INPUT counts against one budget per connection:
// once pasteStep bytes are out that the sidecar has not confirmed, the
// writer that would pass it sends a PING and waits for its PONG. The
// sidecar answers a PING when its dispatch loop reaches it, that is once
// it took every frame before it, so no more than about one piece is ever
// out that the sidecar has not taken, and a CREDIT, which waits at most
// for the INPUT frame being written, is always within its look-ahead.
// Keystrokes cost nothing: they are counted, and only the write that
// fills a piece waits. While a piece waits for its PONG, small writes
// (other terminals' typing) still go out, up to smallSlack more bytes,
// so that a paste, even one whose PONG never comes because its child
// does not read, does not hold up typing elsewhere. Only a peer that
// announced the keepalive is paced: an older one may not answer PING,
// and its INPUT goes out as before. A client started without the
// handshake asks once, when a piece first fills (see pasteHelloWait).

// pasteStep is the most INPUT (of every terminal together) that a
// connection has out before the sidecar confirms having taken it: half
// the sidecar's look-ahead, so that the frames written beside it (RESIZE,
// the PING, small writes within smallSlack) fit too.
const pasteStep = 512 << 10

// smallInput is the largest INPUT frame that may use smallSlack: a
// keystroke, an escape sequence, a line.
const smallInput = 4 << 10

// smallSlack is how far small INPUT may pass a full piece while the
// piece's PONG is awaited.
const smallSlack = 64 << 10

// pasteHelloWait bounds the handshake a client that did not begin with
// one makes when a paste first fills a piece: a current sidecar answers
// at once (its input queue is not full this early), one older than HELLO
// never does, and its pastes then go out unpaced, as they always did,
// after this one pause. A current one that answers late (its reading
// held up by another terminal's input) paces the pastes after its
// answer: a late answer is kept (helloReply).
const pasteHelloWait = 2 * time.Second

// pacer counts a connection's INPUT since its last confirmed PING.
type pacer struct {
	// turn holds a token while a writer sends a PING and waits for its
	// PONG: one at a time. A channel, so that a writer waiting its turn
	// can give up when its terminal ends.
	turn  chan struct{}
	asked bool // the handshake pacing made, if the client had none; under turn
	// waiting counts the writers waiting for their turn or a PONG.
	waiting atomic.Int32

	mu    sync.Mutex
	s     *Stream // the connection sent counts for
	sent  int     // INPUT bytes written on s that no PONG confirmed yet
	seq   uint64
	waits map[string]chan struct{} // by PING body: closed at its PONG
}

// take counts n bytes of INPUT about to be written on s if they fit the
// budget, and reports whether they did. cur is the client's current
// connection, read under p.mu: a writer still on a connection that was
// replaced since it looked counts nothing (its send fails or queues), so
// that it cannot set the count back to its own stream and have the next
// take on the current one start that one's count again from 0. The
// current connection only ever moves forward.
func (p *pacer) take(s *Stream, n int, cur *atomic.Pointer[Stream]) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s != cur.Load() {
		return true
	}
	if p.s != s {
		// A new connection (a reconnecting client's): nothing is out
		// on it yet.
		p.s, p.sent = s, 0
	}
	limit := pasteStep
	if n <= smallInput {
		limit += smallSlack
	}
	if p.sent+n > limit && p.sent > 0 {
		return false
	}
	p.sent += n
	return true
}

// unconfirmed returns the INPUT bytes out on s that no PONG confirmed.
func (p *pacer) unconfirmed(s *Stream) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s != s {
		return 0
	}
	return p.sent
}

// confirm takes n bytes off the count of s: those written before a PING
// whose PONG came, or given up on (a peer that does not answer PING).
func (p *pacer) confirm(s *Stream, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s == s {
		p.sent = max(p.sent-n, 0)
	}
}

// paceInput is called before an INPUT frame of n bytes for t is sent:
// once the piece under way is full, it sends a PING and waits for its
// PONG (or for the connection to end: the send that follows then
// reports what happened). It fails only when t finished meanwhile.
func (c *Client) paceInput(t *Terminal, n int) error {
	if !c.admit(c.stream(), n, t.done, c.pingNow) {
		return errFinishedWhilePaced
	}
	return nil
}

// errFinishedWhilePaced ends a Write whose terminal finished while it
// waited for its turn; Write reports how the terminal ended.
var errFinishedWhilePaced = errors.New("finished while waiting for the sidecar to take earlier input")

// admit waits until n more bytes of INPUT may go out on s and counts
// them. It reports false, counting nothing, when quit closed first; once
// s has ended it reports true without waiting. ping sends a PING on s and
// returns the connection it went out on.
func (c *Client) admit(s *Stream, n int, quit <-chan struct{}, ping func([]byte) (*Stream, error)) bool {
	p := &c.pace
	if s != c.stream() {
		// A connection that dropped: its writer's send fails, or
		// queues, and counting it would reset the current one's count.
		return true
	}
	if p.take(s, n, &c.cur) {
		return true
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case p.turn <- struct{}{}:
	case <-quit:
		return false
	case <-s.ReadDone():
		return true
	}
	defer func() { <-p.turn }()
	for s == c.stream() && !p.take(s, n, &c.cur) {
		out := p.unconfirmed(s)
		if !c.answersPing(s) {
			p.confirm(s, out)
			continue
		}
		switch c.pingWait(s, quit, ping) {
		case pongCame:
			p.confirm(s, out)
		case pingQuit:
			return false
		case pingLost:
			return true
		}
	}
	return true
}

// answersPing reports whether the peer announced the keepalive in its
// HELLO answer, asking it once if nobody did; under pace.turn.
func (c *Client) answersPing(s *Stream) bool {
	c.mu.Lock()
	peer := c.peer
	c.mu.Unlock()
	if peer == nil && !c.pace.asked {
		c.pace.asked = true
		ctx, cancel := context.WithTimeout(context.Background(), pasteHelloWait)
		defer cancel()
		h, err := c.hello(ctx, s)
		if err != nil {
			return false
		}
		peer = &h
	}
	return peer != nil && peer.Has(proto.FeatureKeepalive)
}

// pingEnd is how a pingWait ended.
type pingEnd int

const (
	pongCame pingEnd = iota // the PONG came: the sidecar took what was before the PING
	pingQuit                // the waiter's quit closed first
	pingLost                // the connection is not s any more, or ended
)

// pingNow sends a PING on the current connection (not queued while a
// reconnecting client is down). It does not wait behind a resume's flush
// as sendNow does: the flush may itself wait for the pacer's turn, which
// the caller holds.
func (c *Client) pingNow(frame []byte) (*Stream, error) {
	if c.rc == nil {
		s := c.stream()
		return s, s.Send(frame)
	}
	c.rc.io.Lock()
	defer c.rc.io.Unlock()
	return c.sendUpLocked(context.Background(), frame)
}

// pingWait sends a PING on s with ping and waits for its PONG, for s to
// end or for quit.
func (c *Client) pingWait(s *Stream, quit <-chan struct{}, ping func([]byte) (*Stream, error)) pingEnd {
	p := &c.pace
	p.mu.Lock()
	p.seq++
	body := proto.Marshal(struct {
		Paste uint64 `json:"paste"`
	}{p.seq})
	if p.waits == nil {
		p.waits = make(map[string]chan struct{})
	}
	answered := make(chan struct{})
	p.waits[string(body)] = answered
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waits, string(body))
		p.mu.Unlock()
	}()
	// A connection that is down now or drops under the PING has nothing
	// out to wait for: a reconnecting client's INPUT queues for the
	// next one.
	if sent, err := ping(proto.AppendFrame(nil, proto.TypePing, body)); err != nil || sent != s {
		return pingLost
	}
	select {
	case <-answered:
		return pongCame
	case <-s.ReadDone():
		return pingLost
	case <-quit:
		return pingQuit
	}
}

// ponged takes a PONG: the answer to a paste's PING, or the keepalive's
// (which any frame answers as well, keepalive.go).
func (c *Client) ponged(body []byte) {
	p := &c.pace
	p.mu.Lock()
	if answered, ok := p.waits[string(body)]; ok {
		delete(p.waits, string(body))
		close(answered)
	}
	p.mu.Unlock()
}

// sendClose sends t's CLOSE and returns once the sidecar has taken it, as
// far as the client can tell. With INPUT out that the sidecar has not
// confirmed, it may be holding back every frame behind a child that does
// not read, this CLOSE among them: a PING sent behind the CLOSE tells when
// the sidecar read it (or t finished, or the connection ended).
func (c *Client) sendClose(t *Terminal, frame []byte) error {
	s := c.stream()
	if err := c.sendTerm(frame, len(frame)); err != nil {
		return err
	}
	if c.pace.unconfirmed(s) > 0 && c.pingsKnown() && s == c.stream() {
		c.pingWait(s, t.done, c.pingNow)
	}
	return nil
}

// pingsKnown reports whether the peer announced the keepalive, without
// asking it.
func (c *Client) pingsKnown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peer != nil && c.peer.Has(proto.FeatureKeepalive)
}
