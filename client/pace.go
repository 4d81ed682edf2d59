package client

import (
	"context"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// The pace of a paste into a terminal opened with credit.
//
// A sidecar holding 16 MiB of INPUT for a terminal stops reading frames
// until the child reads some (PROTOCOL.md, INPUT); meanwhile it reads on
// only up to 1 MiB, for the CREDITs among those frames. A child that
// echoes (cat, a shell) reads its input only while its output has credit,
// and the CREDIT that gives it more is sent as the caller reads that
// output: behind all the INPUT written until then. A host that writes
// INPUT as fast as the pipe takes it always has more than 1 MiB of it
// between the frame the sidecar holds and that CREDIT, and the two wait
// for each other for ever. Letting the grant have the pipe before the
// next INPUT frame is not enough: the INPUT written before the grant was
// due is already in the way.
//
// So a credited terminal's INPUT goes out in pieces of at most pasteStep
// bytes with a PING after each, and the next piece is written only once
// that PING's PONG came back. The sidecar answers a PING when its dispatch
// loop reaches it, that is once it took every frame before it, so no more
// than one piece is ever written that the sidecar has not taken, and a
// CREDIT, which waits at most for the INPUT frame being written, is always
// within its look-ahead. Only a peer that announced the keepalive is
// paced: an older one may not answer PING, and its INPUT goes out as
// before. A client started without the handshake asks once, when a
// paste first fills a piece (see pasteHelloWait).

// pasteStep is the most INPUT a credited terminal has out before the
// sidecar confirms having taken it: half the sidecar's look-ahead, so
// that the frames written beside it (other terminals', RESIZE, the PING)
// fit too.
const pasteStep = 512 << 10

// pasteHelloWait bounds the handshake a client that did not begin with
// one makes when a paste first fills a piece: a current sidecar answers
// at once (its input queue is not full this early), one older than HELLO
// never does, and its pastes then go out unpaced, as they always did,
// after this one pause.
const pasteHelloWait = 2 * time.Second

// pacer counts a connection's credited INPUT since its last confirmed PING.
type pacer struct {
	turn  sync.Mutex // held by the INPUT sender that counts, sends the PING, waits
	s     *Stream    // the connection sent counts for
	sent  int        // credited INPUT bytes written on s since the last PONG
	asked bool       // the handshake pasting made, if the client had none

	mu    sync.Mutex
	seq   uint64
	waits map[string]chan struct{} // by PING body: closed at its PONG
}

// paceInput is called before a credited terminal's INPUT frame of n bytes
// is sent: once the piece under way is full, it sends a PING and waits
// for its PONG (or for the connection or the terminal to end; the send
// that follows then reports what happened).
func (c *Client) paceInput(t *Terminal, n int) {
	if t.win.size == 0 {
		return
	}
	p := &c.pace
	p.turn.Lock()
	defer p.turn.Unlock()
	s := c.stream()
	if p.s != s {
		// A new connection (a reconnecting client's): nothing is out
		// on it yet.
		p.s, p.sent = s, 0
	}
	if p.sent+n <= pasteStep {
		p.sent += n
		return
	}
	if p.sent > 0 && c.answersPing(s) {
		c.pingWait(s, t)
	}
	p.sent = n
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

// pingWait sends a PING on s and waits for its PONG, for s to end or for
// t to finish.
func (c *Client) pingWait(s *Stream, t *Terminal) {
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
	frame := proto.AppendFrame(nil, proto.TypePing, body)
	if c.rc != nil {
		// A connection that is down now or drops under the PING has
		// nothing out to wait for: the INPUT queues for the next one.
		if sent, err := c.sendNow(frame); err != nil || sent != s {
			return
		}
	} else if s.Send(frame) != nil {
		return
	}
	select {
	case <-answered:
	case <-s.ReadDone():
	case <-t.done:
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
