package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/internal/cescape"
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
)

// DefaultHelloTimeout bounds a handshake whose context has no deadline. It
// includes whatever the transport does first (ssh connecting and
// authenticating), hence generous.
const DefaultHelloTimeout = 15 * time.Second

// ErrNoHello is wrapped by the error of a handshake the sidecar did not
// answer: a sidecar older than the handshake drops the frame unanswered,
// as the protocol asks of unknown types.
var ErrNoHello = errors.New("no HELLO answer")

// HelloError is a handshake that was answered, but by a sidecar this host
// cannot use.
type HelloError struct {
	Peer    proto.Hello // what it said about itself
	Message string
}

func (e *HelloError) Error() string { return e.Message }

type helloResult struct {
	h   proto.Hello
	err error
}

// sidecarCommand builds the process Start runs: the transport argv when
// there is one, the local sidecar otherwise.
func sidecarCommand(opts Options) (*exec.Cmd, error) {
	stderr := opts.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	if len(opts.Transport) > 0 {
		if opts.Transport[0] == "" {
			return nil, errors.New("start sidecar: the transport's program is empty")
		}
		if len(opts.Args) > 0 || opts.SidecarPath != "" {
			// They used to be dropped without a word, which turned
			// Persistent over a transport into a plain sidecar.
			return nil, fmt.Errorf("start sidecar: Options.Args %q and SidecarPath %q do not apply with a Transport, "+
				"whose argv runs the sidecar: put them there, e.g. {\"ssh\", \"-T\", \"host\", \"ptyplex-sidecar --persist NAME\"}", opts.Args, opts.SidecarPath)
		}
		cmd := exec.Command(opts.Transport[0], opts.Transport[1:]...)
		cmd.Env = opts.Env
		noWindow(cmd)
		// ssh forwards the remote sidecar's stderr here as well, so the
		// mark says which way the line came, not who wrote it.
		cmd.Stderr = &linePrefixer{w: stderr, prefix: "transport " + filepath.Base(opts.Transport[0]) + ": ", start: true}
		return cmd, nil
	}
	path := opts.SidecarPath
	if path == "" {
		p, err := FindSidecar()
		if err != nil {
			return nil, err
		}
		path = p
	}
	cmd := exec.Command(path, opts.Args...)
	cmd.Env = opts.Env
	cmd.Stderr = stderr
	noWindow(cmd)
	// A signal for the host's whole process group (^C at its terminal,
	// a shell's SIGHUP) is the host's to handle: the sidecar ends every
	// terminal on SIGINT, SIGTERM and SIGHUP, so it gets a group of its
	// own, as node-pty's children have a session of their own. It still
	// ends with the host: its stdin closes then. (A transport keeps
	// the host's group: ssh may ask for a password on the terminal.)
	ownGroup(cmd)
	return cmd, nil
}

// linePrefixer writes prefix at the start of every line, and the line's
// control characters escaped (cescape.EscapeControls): the lines come from
// the other side (ssh's messages, the remote sidecar's stderr) and must not
// set the local terminal's title or clipboard, or move its cursor. It holds
// back only the start of a UTF-8 character cut by the write, so a partial
// last line still reaches w.
type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	start  bool   // the next byte begins a line
	cut    []byte // an incomplete UTF-8 sequence at the end of the last write
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	rest := p
	if len(l.cut) > 0 {
		rest = append(l.cut, p...)
		l.cut = nil
	}
	for len(rest) > 0 {
		if l.start {
			out = append(out, l.prefix...)
			l.start = false
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			keep := incompleteTail(rest)
			out = append(out, cescape.EscapeControls(string(rest[:len(rest)-keep]))...)
			l.cut = append(l.cut, rest[len(rest)-keep:]...)
			break
		}
		out = append(out, cescape.EscapeControls(string(rest[:i]))...)
		out = append(out, '\n')
		rest = rest[i+1:]
		l.start = true
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is the length of the start of a UTF-8 character that p
// ends with, which the next write may complete (0 when p ends whole).
func incompleteTail(p []byte) int {
	for k := 1; k <= 3 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte: is its character cut short?
			need := 2
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			}
			if need > k {
				return k
			}
			return 0
		}
	}
	return 0
}

// Pid returns the process Start started: the sidecar, or the transport
// (ssh, kubectl) when Options.Transport was given; 0 for Connect.
func (c *Client) Pid() int {
	if p := c.stream().Process(); p != nil {
		return p.Pid
	}
	return 0
}

// Peer returns the sidecar's HELLO once a handshake succeeded.
func (c *Client) Peer() (proto.Hello, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer == nil {
		return proto.Hello{}, false
	}
	return *c.peer, true
}

func (c *Client) handshake(opts Options) (proto.Hello, error) {
	d := opts.HelloTimeout
	if d <= 0 {
		d = DefaultHelloTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	h, err := c.Hello(ctx)
	if err != nil && len(opts.Transport) > 0 {
		return h, fmt.Errorf("through %q: %w", opts.Transport, err)
	}
	return h, err
}

// Hello sends HELLO and waits for the sidecar's, so that a host can tell a
// sidecar it can use from an old or mismatched one before opening
// terminals. It should come first; terminals opened meanwhile are not
// disturbed. A sidecar that does not answer by ctx's deadline (a ctx
// without one gets DefaultHelloTimeout) predates the handshake: the error
// wraps ErrNoHello. One speaking another protocol version gives a
// *HelloError. Either way the connection stays usable for what the old
// sidecar does serve; the error says what to install.
func (c *Client) Hello(ctx context.Context) (proto.Hello, error) {
	if c.disconnected() {
		return proto.Hello{}, fmt.Errorf("hello: %w: reconnecting", ErrDisconnected)
	}
	return c.hello(ctx, c.stream())
}

// hello is Hello on connection s.
func (c *Client) hello(ctx context.Context, s *Stream) (proto.Hello, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultHelloTimeout)
		defer cancel()
	}
	wait := make(chan helloResult, 1)
	c.mu.Lock()
	if c.helloWait != nil {
		c.mu.Unlock()
		return proto.Hello{}, errors.New("hello: a handshake is already waiting for its answer")
	}
	c.helloWait = wait
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		if c.helloWait == wait {
			c.helloWait = nil
		}
		c.mu.Unlock()
	}
	msg := proto.Hello{Version: version.Version, Protocol: proto.ProtocolVersion, Features: []string{proto.FeatureHello}}
	if err := s.SendContext(ctx, proto.AppendFrame(nil, proto.TypeHello, proto.Marshal(msg))); err != nil {
		forget()
		return proto.Hello{}, fmt.Errorf("hello: %w", err)
	}
	sent := time.Now()
	var r helloResult
	select {
	case r = <-wait:
	case <-s.Done():
		forget()
		return proto.Hello{}, fmt.Errorf("hello: the sidecar went away before answering: %w: %w", ErrSidecarGone, streamCause(s, nil))
	case <-ctx.Done():
		c.mu.Lock()
		if c.helloWait == wait {
			// Its answer may yet come (a slow sidecar, not an old
			// one): it is then taken and dropped, not taken for a
			// peer that breaks the protocol.
			c.helloWait = nil
			c.helloLate++
		}
		c.mu.Unlock()
		return proto.Hello{}, fmt.Errorf("hello: %w within %v: the sidecar is older than the handshake "+
			"(ptyplex-sidecar before HELLO, or another sidecar); install a current one on that machine, "+
			"e.g. `ptyplex remote install HOST`, or start without the handshake: %v", ErrNoHello, time.Since(sent).Round(time.Millisecond), ctx.Err())
	}
	if r.err != nil {
		return proto.Hello{}, fmt.Errorf("hello: %w", r.err)
	}
	if r.h.Protocol != proto.ProtocolVersion {
		return r.h, &HelloError{Peer: r.h, Message: fmt.Sprintf("hello: the sidecar (version %q) speaks protocol %d, this host speaks %d: "+
			"install the sidecar of this host's version (%s) on that machine, e.g. with `ptyplex remote install HOST`",
			r.h.Version, r.h.Protocol, proto.ProtocolVersion, version.Version)}
	}
	c.mu.Lock()
	c.peer = &r.h
	c.mu.Unlock()
	return r.h, nil
}

// helloReply takes the sidecar's HELLO. One nobody asked for, or one that
// cannot be decoded, means the peer is not speaking this protocol.
func (c *Client) helloReply(body []byte) error {
	h, err := proto.ParseHello(body)
	c.mu.Lock()
	wait := c.helloWait
	c.helloWait = nil
	if wait != nil {
		c.mu.Unlock()
	}
	if wait == nil {
		late := c.helloLate > 0
		if late {
			c.helloLate--
		}
		c.mu.Unlock()
		if late && err == nil {
			return nil // the answer to a handshake that gave up waiting
		}
		return fmt.Errorf("%w: a HELLO answer nobody asked for", ErrProtocol)
	}
	if err != nil {
		err = fmt.Errorf("%w: malformed answer: %v", ErrProtocol, err)
		wait <- helloResult{err: err}
		return err
	}
	wait <- helloResult{h: h}
	return nil
}
