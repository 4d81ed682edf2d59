//go:build unix

package client

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"golang.org/x/sys/unix"
)

// The descriptor handoff (PROTOCOL.md, HANDOFF): a bridge between a host
// and the persistent server (ptyplex-sidecar --persist NAME) gives the
// server the host's own stdin and stdout, so that the server reads and
// writes the host's frames itself, and then only waits to hear how the
// host's connection ended.

// HandOffOptions configure HandOff.
type HandOffOptions struct {
	// Version is what the HELLO says the bridge is.
	Version string
	// Features are asked for in the HELLO, beside the handoff itself.
	Features []string
	// Env, when not empty, is sent in the HELLO as the environment the
	// host's terminals start from (a bridge sends its own, os.Environ).
	Env []string
	// Cwd, when not "", is sent in the HELLO as where the host's
	// terminals start when their OPEN names no cwd (a bridge sends its
	// working directory).
	Cwd string
	// Bound is how long each of the server's two answers (to HELLO and
	// to HANDOFF) may take; 10 s when 0.
	Bound time.Duration
}

// ErrHelloUnanswered says a server closed the connection before it
// answered the HELLO: it was going away as it was dialled (killed, crashed
// or stopping) and had accepted the connection, or had it queued, without
// reading it. Nothing of the host's reached it: dialling again is safe,
// and finds it gone (or a new one).
var ErrHelloUnanswered = errors.New("the server closed the connection before it answered the HELLO")

// HelloUnanswered wraps err, from the HELLO's write or the wait for its
// answer, in ErrHelloUnanswered if it says the server closed the
// connection; other errors are returned as they are.
func HelloUnanswered(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
		return fmt.Errorf("%w: %w", ErrHelloUnanswered, err)
	}
	return err
}

// HandedOff is a handoff the server took: the descriptors are its now.
type HandedOff struct {
	c *net.UnixConn
	r *proto.Reader
}

// HandOff sends HELLO on c and, if the server offers the handoff, the
// descriptors in and out with a HANDOFF frame. It returns:
//   - a *HandedOff when the server took them (their copies here are the
//     caller's to close; Wait says how the host's connection ended);
//   - nil and the bytes the server sent past its answers (as the
//     protocol goes, none) when it did not offer the handoff (an older
//     server) or refused it: the descriptors stay the caller's, and the
//     bytes are the host's, before whatever a copy of c brings next;
//   - an error when the exchange itself failed; one that wraps
//     ErrHelloUnanswered when the server closed the connection before
//     its HELLO, so before anything of the host's reached it.
func HandOff(c *net.UnixConn, in, out int, o HandOffOptions) (*HandedOff, []byte, error) {
	if o.Bound <= 0 {
		o.Bound = 10 * time.Second
	}
	c.SetDeadline(time.Now().Add(o.Bound))
	// proto.NewReader reads through br itself only when br's buffer is
	// as large as its own (bufio.NewReaderSize hands back a large enough
	// Reader); with a smaller one it would read ahead into a buffer of
	// its own, and leftover would miss the bytes behind the answers.
	br := bufio.NewReaderSize(c, 64<<10)
	r := proto.NewReader(br)
	leftover := func() []byte {
		c.SetDeadline(time.Time{})
		b, _ := br.Peek(br.Buffered())
		return b
	}
	hello := proto.SidecarHello(o.Version, o.Features)
	hello.Env, hello.Cwd = o.Env, o.Cwd
	if err := proto.WriteFrame(c, proto.TypeHello, proto.Marshal(hello)); err != nil {
		return nil, nil, HelloUnanswered(err)
	}
	h, err := readUntil(r, proto.TypeHelloReply)
	if err != nil {
		return nil, nil, fmt.Errorf("waiting for its HELLO: %w", HelloUnanswered(err))
	}
	if hello, err := proto.ParseHello(h.Body); err != nil || !hello.Has(proto.FeatureHandoff) {
		return nil, leftover(), nil
	}
	c.SetDeadline(time.Now().Add(o.Bound))
	frame := proto.AppendFrame(nil, proto.TypeHandoff, []byte("{}"))
	if _, _, err := c.WriteMsgUnix(frame, unix.UnixRights(in, out), nil); err != nil {
		return nil, nil, fmt.Errorf("handing the host's descriptors over: %w", err)
	}
	a, err := readUntil(r, proto.TypeHandedOff, proto.TypeError)
	if err != nil {
		return nil, nil, fmt.Errorf("waiting for the answer to HANDOFF: %w", err)
	}
	if a.Type == proto.TypeError {
		// Refused (the server's log says why): still ours.
		return nil, leftover(), nil
	}
	c.SetDeadline(time.Time{})
	return &HandedOff{c: c, r: r}, nil, nil
}

// Wait reads until the server says how the host's connection ended
// (HOST_ENDED) and returns that. A server that goes away without a word
// (an upgrade's exec, a crash) ends the wait with io.EOF, or the error
// that ended the stream, and a zero HostEnded.
func (h *HandedOff) Wait() (proto.HostEnded, error) {
	for {
		f, err := h.r.ReadFrame()
		if err != nil {
			if errors.Is(err, unix.ECONNRESET) {
				err = io.EOF
			}
			return proto.HostEnded{}, err
		}
		if f.Type != proto.TypeHostEnded {
			continue
		}
		var e proto.HostEnded
		if err := json.Unmarshal(f.Body, &e); err != nil {
			return e, fmt.Errorf("malformed HOST_ENDED: %w", err)
		}
		return e, nil
	}
}

// readUntil reads frames until one of the types in want.
func readUntil(r *proto.Reader, want ...proto.Type) (proto.Frame, error) {
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return f, err
		}
		for _, t := range want {
			if f.Type == t {
				return f, nil
			}
		}
	}
}
