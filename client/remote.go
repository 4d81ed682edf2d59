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
	"strings"
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

// ErrNoReply is wrapped, with ErrNoHello, by the error of a handshake
// through a transport that gave back not one byte in time: the transport
// may not have reached the other machine at all (unreachable, ssh still
// connecting or waiting at a prompt), or the sidecar there is older than
// the handshake. On a reconnect, after a sidecar answered HELLO on the
// connection before, it is taken for the former. A sidecar that sent
// something, but no HELLO answer, gives ErrNoHello alone.
var ErrNoReply = errors.New("not one byte came back through the transport")

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
// set the local terminal's title or clipboard, or move its cursor. A
// carriage return ending a line (ssh ends its messages with CR LF) is
// dropped, not escaped. It holds back only the start of a UTF-8 character
// cut by the write, or a CR that may be a line's end, so a partial last
// line still reaches w. It keeps the last line for error messages
// (lastLine).
type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	start  bool   // the next byte begins a line
	cut    []byte // an incomplete UTF-8 sequence, or a CR, at the end of the last write
	cur    []byte // the line being written, raw (its first maxSaidLine bytes)
	last   string // the last non-empty complete line, trimmed and escaped
}

// maxSaidLine bounds the line kept for messages.
const maxSaidLine = 512

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
			if keep == 0 && rest[len(rest)-1] == '\r' {
				keep = 1 // a CR LF cut between two writes
			}
			l.note(rest[:len(rest)-keep])
			out = append(out, cescape.EscapeControls(string(rest[:len(rest)-keep]))...)
			l.cut = append(l.cut, rest[len(rest)-keep:]...)
			break
		}
		line := bytes.TrimSuffix(rest[:i], []byte{'\r'})
		l.note(line)
		out = append(out, cescape.EscapeControls(string(line))...)
		out = append(out, '\n')
		rest = rest[i+1:]
		l.start = true
		if s := strings.TrimSpace(string(l.cur)); s != "" {
			l.last = cescape.EscapeControls(s)
		}
		l.cur = l.cur[:0]
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// note keeps the start of the current line.
func (l *linePrefixer) note(b []byte) {
	if room := maxSaidLine - len(l.cur); room > 0 {
		l.cur = append(l.cur, b[:min(room, len(b))]...)
	}
}

// lastLine is what the other side said last: the line being written, or
// else the last complete one; "" if nothing.
func (l *linePrefixer) lastLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := strings.TrimSpace(string(l.cur)); s != "" {
		return cescape.EscapeControls(s)
	}
	return l.last
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

// transportName is the program of s's transport ("ssh"), "" when s is
// not a transport's (a local sidecar, Connect).
func transportName(s *Stream) string {
	if s.cmd == nil {
		return ""
	}
	if _, ok := s.cmd.Stderr.(*linePrefixer); !ok {
		return ""
	}
	return filepath.Base(s.cmd.Args[0])
}

// transportSaid is the last line s's transport wrote to stderr, escaped;
// "" when none or not a transport.
func transportSaid(s *Stream) string {
	if s.cmd == nil {
		return ""
	}
	if l, ok := s.cmd.Stderr.(*linePrefixer); ok {
		return l.lastLine()
	}
	return ""
}

// Pid returns the process Start started: the sidecar, or the transport
// (ssh, kubectl) when Options.Transport was given; 0 for Connect. A
// reconnecting client (Options.Reconnect) has no such process while it is
// disconnected, and Pid returns 0 then; once reconnected it returns the
// new process's pid, and 0 for good after it gave up.
func (c *Client) Pid() int {
	if c.rc != nil {
		c.rc.io.Lock()
		down := c.rc.down
		c.rc.io.Unlock()
		if down {
			// Reconnecting, or given up: no transport runs.
			return 0
		}
	}
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
// wraps ErrNoHello. Through a transport that gave back not one byte it
// wraps ErrNoReply too, and says the transport may not have got through.
// One speaking another protocol version gives a *HelloError. Either way
// the connection stays usable for what the old sidecar does serve; the
// error says what to install. A ctx canceled before the answer (rather
// than past its deadline) gives an error wrapping context.Canceled alone,
// and one that has ended already sends nothing. Concurrent calls take
// turns, each within its own ctx.
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
	// HELLO's answer names no request, so handshakes take turns; one
	// that finds another under way waits for it (within ctx) rather than
	// failing, as concurrent callers of any other method would expect.
	select {
	case c.helloTurn <- struct{}{}:
	default:
		select {
		case c.helloTurn <- struct{}{}:
		case <-ctx.Done():
			return proto.Hello{}, fmt.Errorf("hello: waiting for another handshake to end: %w", ctx.Err())
		}
	}
	defer func() { <-c.helloTurn }()
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
		if c.resumable(s) {
			return proto.Hello{}, fmt.Errorf("hello: %w", c.dropping(s, err))
		}
		if name := transportName(s); name != "" && errors.Is(err, ErrSidecarGone) {
			select {
			case <-s.Done():
				// Its exit and last words say more than the pipe.
				return proto.Hello{}, fmt.Errorf("hello: the transport (%s) ended before the sidecar answered: %w: %w", name, ErrSidecarGone, streamCause(s, nil))
			default:
			}
		}
		return proto.Hello{}, fmt.Errorf("hello: %w", err)
	}
	sent := time.Now()
	var r helloResult
	select {
	case r = <-wait:
	case <-s.Done():
		forget()
		if cause := streamCause(s, nil); c.stopping() && errors.Is(cause, errCleanEnd) {
			// Our own Close (or Stop) ended the connection, not the
			// sidecar going away.
			return proto.Hello{}, fmt.Errorf("hello: %w before the sidecar answered", ErrClientClosed)
		}
		if c.resumable(s) && !c.stopping() {
			// The drop took the answer away; the client reconnects.
			return proto.Hello{}, fmt.Errorf("hello: %w: the connection dropped before the answer: %v", ErrDisconnected, streamCause(s, nil))
		}
		if name := transportName(s); name != "" {
			return proto.Hello{}, fmt.Errorf("hello: the transport (%s) ended before the sidecar answered: %w: %w", name, ErrSidecarGone, streamCause(s, nil))
		}
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
		answered := c.peer != nil // on an earlier connection
		c.mu.Unlock()
		took := time.Since(sent).Round(time.Millisecond)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The caller gave up (or Close stopped a reconnect): that
			// says nothing about the sidecar's age.
			return proto.Hello{}, fmt.Errorf("hello: canceled after %v, before the sidecar answered: %w", took, ctx.Err())
		}
		if name := transportName(s); name != "" && !s.heard.Load() {
			// Not one byte: nothing says a sidecar is there at all.
			said := ""
			if l := transportSaid(s); l != "" {
				said = fmt.Sprintf("; it said last: %q", l)
			}
			if answered {
				return proto.Hello{}, fmt.Errorf("hello: %w within %v: %w: the transport (%s) has not reached the sidecar: "+
					"the machine is unreachable or slow to connect, or the transport hangs%s "+
					"(the sidecar there answered HELLO on the previous connection): %v", ErrNoHello, took, ErrNoReply, name, said, ctx.Err())
			}
			return proto.Hello{}, fmt.Errorf("hello: %w within %v: %w: either the transport (%s) has not reached the sidecar "+
				"(the machine unreachable or slow to connect, a password or host key prompt, a command that hangs)%s, "+
				"or the sidecar there is older than the handshake and drops HELLO unanswered; run the transport's command "+
				"by hand to see which, and if an old sidecar starts, install a current one on that machine, e.g. "+
				"`ptyplex remote install HOST`, or start without the handshake: %v", ErrNoHello, took, ErrNoReply, name, said, ctx.Err())
		}
		return proto.Hello{}, fmt.Errorf("hello: %w within %v: the sidecar is older than the handshake "+
			"(ptyplex-sidecar before HELLO, or another sidecar); install a current one on that machine, "+
			"e.g. `ptyplex remote install HOST`, or start without the handshake: %v", ErrNoHello, took, ctx.Err())
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
			// The answer to a handshake that gave up waiting: a slow
			// sidecar, not an old one. Known from now on, if nothing is
			// known yet, so that pacing, which asked once and gave up,
			// paces the pastes that follow.
			if err == nil && c.peer == nil && h.Protocol == proto.ProtocolVersion {
				c.peer = &h
			}
		}
		c.mu.Unlock()
		if late && err == nil {
			return nil
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
