package client

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/ptyplex/ptyplex/proto"
)

// The persistent server's own requests, beside LIST (persist.go): STOP
// and UPGRADE. A program that manages the server (ptyplex-sidecar's
// --stop and --upgrade) connects to its socket itself, with Connect, so
// that no server is started by asking; these then speak to it.

// ServerError is a request of the persistent server's own (not about a
// terminal) that it refused with an ERROR frame.
type ServerError struct {
	Request proto.Type
	Message string // the server's reason
}

func (e *ServerError) Error() string { return e.Message }

// upgradeWait is the one UPGRADE in flight: its UPGRADING, or the ERROR
// that refused it or says its exec failed.
type upgradeWait chan upgradeAnswer

type upgradeAnswer struct {
	up  *proto.Upgrading
	err error
}

// Stop asks the persistent server to end (STOP): it kills its terminals
// and closes every connection once they have ended. Stop returns when
// this connection ended and, for a client Persistent started, once the
// server's process is gone too (its lock is free, as
// `ptyplex-sidecar --stop` waits for it), so that a server of that name
// starts afresh at once (or another server of that name listens, one
// that another client's reconnect started once the lock was free); or
// with ctx's error if that did not happen by then. (Through
// a Transport, the server's machine is not this one: Stop returns as the
// connection ends.) The client is done then, as after Close: a
// reconnecting one does not take that end for a drop (it would start a
// new server). A ctx that has ended
// already sends nothing: the server and the client go on. So does a
// reconnecting client that is down, or whose connection fails under the
// STOP: the error wraps ErrDisconnected, and the client reconnects as
// before. A plain sidecar skips STOP, as it skips every frame it does not
// know: Stop then waits until ctx ends, and the client takes no new
// terminals (Close ends it).
func (c *Client) Stop(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	frame := proto.AppendFrame(nil, proto.TypeStop, []byte("{}"))
	var was serverMark // the server this STOP goes to, as listening now
	if c.server != "" {
		was = markServer(c.opts.Env, c.server)
	}
	var s *Stream
	if c.rc != nil {
		var err error
		if s, err = c.stopResuming(ctx, frame); err != nil {
			return fmt.Errorf("stop: %w", err)
		}
	} else {
		c.mu.Lock()
		c.closing = true
		s = c.stream()
		c.mu.Unlock()
		if err := s.SendContext(ctx, frame); err != nil {
			return fmt.Errorf("stop: %w", err)
		}
	}
	select {
	case <-s.ReadDone():
		if err := s.ReadErr(); err != nil {
			return fmt.Errorf("stop: waiting for the server to end: %w", err)
		}
	case <-ctx.Done():
		return fmt.Errorf("stop: waiting for the server to end: %w", ctx.Err())
	}
	if c.server != "" {
		// The server closes its connections a moment before its
		// process ends and frees its lock.
		if err := waitServerGone(ctx, c.opts.Env, c.server, was); err != nil {
			return fmt.Errorf("stop: %w", err)
		}
	}
	return nil
}

// stopResuming sends a reconnecting client's STOP. It is sent under the
// resumer's lock, so that the connection cannot be taken for down or come
// back meanwhile: while it is down nothing is sent, and the client goes
// on (it used to end, with the server and its terminals untouched). Only
// once the STOP went out is the client marked closing; the server's end
// of the connection, should it come first, waits in reconnect for the
// lock and then finds the mark.
func (c *Client) stopResuming(ctx context.Context, frame []byte) (*Stream, error) {
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	// Not behind a resume's flush (waitFlushedLocked): the STOP ends the
	// terminals the queued input is for, and a flush held up by a child
	// that does not read would hold the STOP up with it.
	s, err := c.sendUpLocked(ctx, frame)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	r.stopOnce.Do(func() { close(r.stop) })
	return s, nil
}

// Upgrade asks the persistent server to re-execute itself as the binary
// at path, which names version (UPGRADE; docs/persist.md), keeping its
// terminals. It returns the server's UPGRADING once the server closed
// this connection to re-execute itself. A refusal, or an ERROR after
// UPGRADING (the exec failed and the server went on as it was), is a
// *ServerError; ctx bounds each of the two waits. A ctx that has ended
// already sends nothing, and so does a reconnecting client that is down
// (the error wraps ErrDisconnected).
//
// The connection is of no more use afterwards: the new image listens on
// the same socket, for a new Connect. A client without Reconnect then ends
// as when its sidecar goes away (Err wraps ErrSidecarGone, and so does
// the error of each of its terminals, which run on in the new image for
// an Attach); a reconnecting one takes the end for a drop, reconnects to
// the new image and resumes its terminals there.
func (c *Client) Upgrade(ctx context.Context, path, version string) (proto.Upgrading, error) {
	if c.disconnected() {
		return proto.Upgrading{}, fmt.Errorf("upgrade: %w: reconnecting", ErrDisconnected)
	}
	wait := make(upgradeWait, 2)
	c.mu.Lock()
	if c.upgradeWait != nil {
		c.mu.Unlock()
		return proto.Upgrading{}, errors.New("upgrade: one is already waiting for its answer")
	}
	c.upgradeWait = wait
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.upgradeWait == wait {
			c.upgradeWait = nil
		}
		c.mu.Unlock()
	}()
	s := c.stream()
	if err := s.SendContext(ctx, proto.AppendFrame(nil, proto.TypeUpgrade, proto.Marshal(proto.Upgrade{Path: path, Version: version}))); err != nil {
		return proto.Upgrading{}, fmt.Errorf("upgrade: %w", c.dropping(s, err))
	}
	var up proto.Upgrading
	select {
	case a := <-wait:
		if a.err != nil {
			return proto.Upgrading{}, a.err
		}
		up = *a.up
	case <-s.ReadDone():
		return proto.Upgrading{}, fmt.Errorf("upgrade: the server closed the connection before answering: %w", streamCause(s, nil))
	case <-ctx.Done():
		return proto.Upgrading{}, fmt.Errorf("upgrade: waiting for the server's answer: %w", ctx.Err())
	}
	// The exec closes this connection; an ERROR before that says it
	// failed. A connection reset is how some kernels end it.
	select {
	case a := <-wait:
		if a.err != nil {
			return up, a.err
		}
		return up, fmt.Errorf("%w: a second UPGRADING", ErrProtocol)
	case <-s.ReadDone():
		if err := s.ReadErr(); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			return up, fmt.Errorf("upgrade: waiting for the server to re-execute itself: %w", err)
		}
		return up, nil
	case <-ctx.Done():
		return up, fmt.Errorf("upgrade: waiting for the server to re-execute itself: %w", ctx.Err())
	}
}

// upgradeAnswered takes the server's UPGRADING, or an ERROR about no terminal
// while an UPGRADE waits; it reports whether one did.
func (c *Client) upgradeAnswered(a upgradeAnswer) bool {
	c.mu.Lock()
	wait := c.upgradeWait
	c.mu.Unlock()
	if wait == nil {
		return false
	}
	select {
	case wait <- a:
	default:
	}
	return true
}
