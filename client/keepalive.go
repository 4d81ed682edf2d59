package client

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// The keepalive of a reconnecting client: PING while the connection is
// quiet, and a transport killed when nothing at all arrives in time.

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
// OUTPUT ahead of it proves the same thing sooner. The PING asks for its
// PONG at once ("now"): a paste that waits for a child that reads nothing
// holds back the pacing PINGs, not this one. PINGs are sent from a
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
			// "now": answered as soon as the sidecar reads it, even
			// while a paste waits for a child that reads nothing
			// (a sidecar without FeaturePingNow answers it in turn).
			body := proto.Marshal(struct {
				Seq int  `json:"seq"`
				Now bool `json:"now"`
			}{seq, true})
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
