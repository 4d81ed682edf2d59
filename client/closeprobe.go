package client

import (
	"context"
	"sync/atomic"
	"time"
)

// How Close tells a sidecar that shuts down slowly, which it waits for,
// from one that will not shut down at all: a sidecar holding back every
// frame behind a child that does not read (a paste's PONG that does not
// come), or a transport that is hung (stopped, its network gone). The
// end of the sidecar's input, which Close sends, reaches neither.

// probeBound is how long Close's probe waits for the sidecar: long
// enough for a PONG over a slow remote link (ssh across the world, a
// loaded machine), whose terminals would otherwise end without their
// EXIT statuses, and far below the keepalive's bound.
const probeBound = 2 * time.Second

// probeResult is what a PING sent as Close begins showed.
type probeResult struct {
	ponged bool // its PONG came: the sidecar took every frame before it
	heard  bool // some frame came meanwhile: the transport is alive
	// blocked: the PING could not even be written, a write in progress
	// held the pipe for the whole probe.
	blocked bool
}

// probe sends a PING on s, a connection to a process we started whose
// peer announced the keepalive, and waits up to probeBound for its PONG.
// Any other case (Connect's streams, a peer that answers no PING) reports
// both as true: nothing is known, and Close waits as it always did.
func (c *Client) probe(s *Stream) probeResult {
	if s.Process() == nil || !c.pingsKnown() {
		return probeResult{ponged: true, heard: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeBound)
	defer cancel()
	before := s.frames.Load()
	var pinged atomic.Bool
	send := func(frame []byte) (*Stream, error) {
		err := s.SendContext(ctx, frame)
		pinged.Store(err == nil)
		return s, err
	}
	if c.pingWait(s, ctx.Done(), send) == pongCame {
		return probeResult{ponged: true, heard: true}
	}
	select {
	case <-s.ReadDone():
		// It ended meanwhile: nothing to tear down.
		return probeResult{ponged: true, heard: true}
	default:
	}
	// Every frame read is a sign of life, OUTPUT queued ahead of the
	// PONG in the sidecar's writer as well.
	return probeResult{heard: s.frames.Load() != before, blocked: !pinged.Load()}
}
