package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/proto"
)

// Defaults.
const (
	// DefaultWindow is the credit window of a terminal opened without one.
	DefaultWindow = 256 << 10
	// DefaultOpenTimeout bounds an Open whose context has no deadline. A
	// malformed OPEN whose id the sidecar cannot recover is never answered;
	// this is what reclaims it.
	DefaultOpenTimeout = 10 * time.Second
	// closeBound is how long Close waits for the sidecar to finish after
	// its stdin closed before killing it. The sidecar bounds its own
	// shutdown at 10 s.
	closeBound = 15 * time.Second
)

// Options configure the sidecar process a Client starts.
type Options struct {
	// SidecarPath is the ptyplex-sidecar executable; "" means FindSidecar.
	SidecarPath string
	// Args are extra sidecar arguments, e.g. {"--record", "session.fixture"}.
	Args []string
	// Stderr receives the sidecar's diagnostics; nil means os.Stderr.
	Stderr io.Writer
	// Env is the sidecar's environment (and so the base of every
	// terminal's); nil means ours.
	Env []string
	// Transport, if set, is the command that reaches a sidecar, run
	// instead of SidecarPath and Args: {"ssh", "-T", "host",
	// "ptyplex-sidecar"}, {"kubectl", "exec", "-i", "pod", "--",
	// "ptyplex-sidecar"}. Its stdin and stdout carry the frames; its
	// stderr goes to Stderr with every line marked as the transport's.
	Transport []string
	// Hello makes Start begin with the handshake (Client.Hello) and fail
	// when the sidecar is too old to answer it or speaks another
	// protocol version, with an error that says what to do.
	Hello bool
	// HelloTimeout bounds the handshake; 0 means DefaultHelloTimeout.
	// It bounds each reconnect attempt's handshake as well.
	HelloTimeout time.Duration
	// Reconnect, if set, makes the client resume its terminals when the
	// transport ends without Close (see ReconnectPolicy). It needs a
	// persistent sidecar and turns Hello on.
	Reconnect *ReconnectPolicy
	// Install, if set, installs the sidecar on the other machine before
	// the first connect, as `ptyplex remote install` does, and runs the
	// installed one (see InstallOptions). Transport must then be empty.
	Install *InstallOptions
}

// OpenOptions describe one terminal.
type OpenOptions struct {
	// ID is the terminal id on the wire; "" generates a unique one.
	ID   string
	Cmd  string   // program: a path, or a name looked up in PATH
	Args []string // arguments after the program name
	// CommandLine (Windows sidecars only) is the child's command line
	// after the program, passed as written instead of Args (which are
	// quoted for CommandLineToArgvW): what cmd.exe /c needs for a command
	// that holds double quotes. It cannot be combined with Args. A
	// sidecar on Unix refuses it (*OpenError); when the sidecar answered
	// HELLO without the commandLine feature (an older Windows one, which
	// would start the program without it), Open fails before sending.
	CommandLine string
	Dir         string // working directory; "" inherits the sidecar's
	// Env is merged over the sidecar's environment.
	Env map[string]string
	// Cols and Rows are the initial size; 0 means 80x24.
	Cols, Rows uint16
	// Window is the credit window in bytes; 0 means DefaultWindow.
	Window int
	// Raw opens the terminal without credit: the sidecar never throttles
	// it and its output is buffered here without bound until read.
	Raw bool
	// Journal and Detached apply to a persistent sidecar (Persistent)
	// only: the terminal's journal size in bytes (0: the server's
	// default) and what happens while no host holds it, "ring" (the
	// default) or "park" (see docs/persist.md). A plain sidecar ignores
	// them.
	Journal  int
	Detached string
	// OrphanMs applies to a persistent sidecar only: how long, in
	// milliseconds, the terminal may run with no host holding it before
	// the server closes it; 0: the server's --orphan-timeout (default
	// 3 h), proto.OrphanNever (-1): never.
	OrphanMs int64
}

// Client multiplexes terminals over one sidecar.
type Client struct {
	// cur is the frame level: writes, the reader goroutine, the process.
	// It changes only when a reconnect installs a new connection.
	cur  atomic.Pointer[Stream]
	opts Options
	rc   *resumer // nil unless Options.Reconnect

	mu       sync.Mutex
	pending  map[string]*pendingOpen
	live     map[string]*Terminal
	closing  bool
	ended    error // why the stream ended, once it has
	cleanEnd bool  // it ended cleanly after Close (or Stop) began: Err is nil; an end before Close stays an error
	idPrefix string
	nextID   atomic.Uint64

	helloTurn chan struct{}    // holds a token while a handshake is under way: one at a time
	helloWait chan helloResult // a handshake waiting for its answer
	helloLate int              // handshakes that gave up waiting, whose answer may still come
	peer      *proto.Hello     // the sidecar's HELLO, once it answered

	done chan struct{} // closed once the stream ended and every terminal was finished
	// closeBound is how long Close waits for the stream to end after
	// closing the sidecar's input (closeBound, the constant; a field so
	// that a test need not wait that long).
	closeBound time.Duration

	persist persistState // LIST and ATTACH in flight (persist.go)
	// upgradeWait is the UPGRADE waiting for its answer, if any (serverctl.go); under mu.
	upgradeWait upgradeWait

	pace pacer // every terminal's INPUT, in pieces the sidecar confirms (pace.go)

	// server names the local persistent server Persistent started the
	// client on, whose end Stop waits for (servergone_unix.go).
	server string
}

// pendingOpen is an OPEN waiting for its OPENED or ERROR.
type pendingOpen struct {
	t         *Terminal
	result    chan error // capacity 1; nil error means OPENED
	abandoned bool       // the caller gave up (timeout); close it if it opens
	// detach makes an abandoned one that opens after all detached rather
	// than closed: a revived terminal is the user's old session, which a
	// caller's timeout must not end.
	detach bool
}

// Start starts a sidecar process and returns a Client that owns its stdin
// and stdout. The process lives until Close (or until it dies).
func Start(opts Options) (*Client, error) {
	if opts.Install != nil {
		argv, err := install(opts)
		if err != nil {
			return nil, err
		}
		opts.Transport, opts.Install = argv, nil
	}
	cmd, err := sidecarCommand(opts)
	if err != nil {
		return nil, err
	}
	c := newClient()
	var lv *liveness
	if opts.Reconnect != nil {
		// Resuming needs to know the peer keeps terminals, which only
		// the handshake says.
		opts.Hello = true
		p := opts.Reconnect.withDefaults()
		c.rc = &resumer{policy: p, ready: make(chan struct{}), stop: make(chan struct{}), events: newEventQueue(p.OnEvent)}
		lv = &liveness{}
	}
	c.opts = opts
	s, err := StartStream(cmd, StreamOptions{Handle: c.handler(lv), CheckData: c.checkOutput})
	if err != nil {
		if c.rc != nil {
			c.rc.events.close()
		}
		return nil, err
	}
	s.lv = lv
	c.cur.Store(s)
	go c.watch()
	fail := func(err error) (*Client, error) {
		// Closing first: a reconnecting client must not take this end
		// for a drop.
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		s.Kill()
		c.Close()
		return nil, err
	}
	if opts.Hello {
		peer, err := c.handshake(opts)
		if err != nil {
			if c.rc != nil {
				// Nothing to resume yet: as npm's first connection.
				err = fmt.Errorf("start: the first connection failed, which Reconnect does not retry "+
					"(it resumes a connection whose handshake succeeded): %w", err)
			}
			return fail(err)
		}
		if c.rc != nil && !peer.Has(proto.FeaturePersist) {
			return fail(fmt.Errorf("start: Options.Reconnect needs a persistent sidecar, whose terminals outlive the connection, "+
				"and this one does not announce %q: run `ptyplex-sidecar --persist NAME` (client.Persistent, or in the Transport's argv)", proto.FeaturePersist))
		}
		c.startKeepalive(s, lv, peer)
	}
	if c.rc != nil {
		close(c.rc.ready)
	}
	return c, nil
}

// Connect returns a Client speaking the frame protocol over an existing
// stream, for a sidecar this program did not start itself (for example
// `ssh host ptyplex-sidecar`, or a persistent server's socket). Close
// closes w and waits for r to end, as the sidecar answers the end of its
// input. A w that can close its writing half alone (a *net.UnixConn or
// *net.TCPConn, which may be r as well) is half-closed, so that the
// sidecar still sends what it has queued and then closes the connection,
// a clean end; it is closed whole once r has ended. Should r not end
// within 15 s, Close closes w, and r too if it is an io.Closer, and
// returns.
func Connect(r io.Reader, w io.WriteCloser) *Client {
	c := newClient()
	if h, ok := w.(interface {
		io.WriteCloser
		CloseWrite() error
	}); ok {
		w = halfClosing{h}
	}
	c.cur.Store(NewStream(r, w, StreamOptions{Handle: c.dispatch, CheckData: c.checkOutput}))
	go c.watch()
	return c
}

func newClient() *Client {
	var b [4]byte
	rand.Read(b[:])
	return &Client{
		pending:    make(map[string]*pendingOpen),
		live:       make(map[string]*Terminal),
		idPrefix:   "term-" + hex.EncodeToString(b[:]) + "-",
		done:       make(chan struct{}),
		helloTurn:  make(chan struct{}, 1),
		persist:    persistState{listTurn: make(chan struct{}, 1)},
		pace:       pacer{turn: make(chan struct{}, 1)},
		closeBound: closeBound,
	}
}

// Open starts a terminal and returns it once the sidecar answered OPENED.
// A refusal is returned as an *OpenError carrying the sidecar's message.
// If ctx ends first (a ctx without deadline gets DefaultOpenTimeout), Open
// returns an error wrapping ctx.Err(); should the terminal open after all,
// the client closes it. Cmd, Args, Dir and CommandLine must be valid
// UTF-8: OPEN is JSON, which would carry U+FFFD in place of any other
// byte, a program or argument nobody named, so Open refuses them without
// sending anything (Env values travel as JSON decodes them, as the
// protocol takes them).
func (c *Client) Open(ctx context.Context, o OpenOptions) (*Terminal, error) {
	if o.Cmd == "" {
		return nil, errors.New("open terminal: no command")
	}
	if err := checkUTF8(o); err != nil {
		return nil, fmt.Errorf("open terminal: %w", err)
	}
	if o.Cols == 0 {
		o.Cols = 80
	}
	if o.Rows == 0 {
		o.Rows = 24
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open terminal: %w", err)
	}
	if o.CommandLine != "" {
		if len(o.Args) > 0 {
			return nil, errors.New("open terminal: CommandLine and Args cannot both be given")
		}
		c.mu.Lock()
		peer := c.peer
		c.mu.Unlock()
		if peer != nil && !slices.Contains(peer.Features, proto.FeatureCommandLine) {
			return nil, fmt.Errorf("open terminal: %w: the sidecar does not serve CommandLine (no %q among its features)", errors.ErrUnsupported, proto.FeatureCommandLine)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultOpenTimeout)
		defer cancel()
	}

	p, s, err := c.register("open terminal", o)
	if err != nil {
		return nil, err
	}
	id := p.t.id
	msg := proto.Open{TerminalID: id, Cols: o.Cols, Rows: o.Rows, Cmd: o.Cmd, Args: o.Args, Env: o.Env, CommandLine: o.CommandLine}
	if o.Dir != "" {
		msg.Cwd = &o.Dir
	}
	if !o.Raw {
		credit := uint64(o.Window)
		msg.Credit = &credit
	}
	if err := s.SendContext(ctx, proto.AppendFrame(nil, proto.TypeOpen, openBody(msg, o))); err != nil {
		c.mu.Lock()
		if c.pending[id] == p {
			delete(c.pending, id)
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("open terminal %q: %w", id, c.dropping(s, err))
	}

	select {
	case err := <-p.result:
		if err != nil {
			return nil, err
		}
		return p.t, nil
	case <-ctx.Done():
	}
	c.mu.Lock()
	if c.pending[id] == p {
		p.abandoned = true
		c.mu.Unlock()
		return nil, fmt.Errorf("open terminal %q: no answer from the sidecar: %w", id, ctx.Err())
	}
	c.mu.Unlock()
	// The answer was settled while we were giving up; take it.
	if err := <-p.result; err != nil {
		return nil, err
	}
	return p.t, nil
}

// checkUTF8 refuses the strings of o that JSON cannot carry as they are.
// encoding/json turns each byte outside a UTF-8 character into U+FFFD, so
// the sidecar, which refuses such strings (PROTOCOL.md, OPEN), would
// never see them and would start a program, or pass an argument, that
// differs from the caller's.
func checkUTF8(o OpenOptions) error {
	check := func(what, s string) error {
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				return fmt.Errorf("%s is not valid UTF-8 (byte %#02x at offset %d), which JSON would carry as U+FFFD", what, s[i], i)
			}
			i += n
		}
		return nil
	}
	if err := check("cmd", o.Cmd); err != nil {
		return err
	}
	for i, a := range o.Args {
		if err := check(fmt.Sprintf("args[%d]", i), a); err != nil {
			return err
		}
	}
	if err := check("cwd", o.Dir); err != nil {
		return err
	}
	return check("commandLine", o.CommandLine)
}

// register reserves o's id (generating one if needed) as a pending open,
// and returns the connection to ask on; op names the request in errors. The request must go to that one:
// were the connection to drop meanwhile, the drop fails the pending open,
// and an OPEN reaching the next connection would be answered with an
// OPENED nobody waits for.
func (c *Client) register(op string, o OpenOptions) (*pendingOpen, *Stream, error) {
	if c.disconnected() {
		return nil, nil, fmt.Errorf("%s: %w: reconnecting", op, ErrDisconnected)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return nil, nil, ErrClientClosed
	case c.ended != nil:
		return nil, nil, fmt.Errorf("%s: %w", op, c.ended)
	}
	id := o.ID
	if id == "" {
		for id == "" || c.inUse(id) {
			id = fmt.Sprint(c.idPrefix, c.nextID.Add(1))
		}
	} else if err := proto.CheckID(id); err != nil {
		return nil, nil, fmt.Errorf("%s %q: %w", op, id, err)
	} else if c.inUse(id) {
		// The sidecar would refuse it too, but its ERROR could not be
		// told apart from one about the live terminal of that id.
		return nil, nil, &OpenError{TerminalID: id, Message: "terminal id already exists"}
	}
	p := &pendingOpen{t: newTerminal(c, id, o.Window, o.Raw), result: make(chan error, 1)}
	c.pending[id] = p
	return p, c.stream(), nil
}

// disconnected reports whether a reconnecting client is between
// connections. One that gave up is not: it has ended, and its requests
// fail with that end (ErrSidecarGone), not with ErrDisconnected, which
// says a reconnect is under way.
func (c *Client) disconnected() bool {
	if c.rc == nil {
		return false
	}
	c.rc.io.Lock()
	defer c.rc.io.Unlock()
	return c.rc.down && c.rc.gone == nil
}

// stream returns the current connection.
func (c *Client) stream() *Stream { return c.cur.Load() }

func (c *Client) inUse(id string) bool {
	_, p := c.pending[id]
	_, l := c.live[id]
	return p || l
}

// send writes one encoded frame to the sidecar, on the current
// connection.
func (c *Client) send(frame []byte) error { return c.stream().Send(frame) }

// Done is closed once the sidecar's stream has ended (after Close, or
// because the sidecar died); Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the stream ended: nil while it runs and after a clean
// Close, an error wrapping ErrSidecarGone otherwise. It is set before the
// pending opens fail and the live terminals finish, so a caller that
// sees one of them end with ErrSidecarGone finds the reason here at once
// (Done is closed a moment later).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cleanEnd {
		return nil
	}
	return c.ended
}

// plainLocal says the sidecar is a plain one (not a persistent server's
// bridge) that this client started on this machine.
func (c *Client) plainLocal() bool {
	if len(c.opts.Transport) > 0 || c.stream().Process() == nil {
		return false
	}
	for _, a := range c.opts.Args {
		if a == "--persist" {
			return false
		}
	}
	return true
}

// errCleanEnd marks a stream that ended at a frame boundary.
var errCleanEnd = errors.New("sidecar closed its output")

// Close shuts the sidecar down: it closes the sidecar's stdin, which makes
// the sidecar kill every terminal, send their EXIT frames and exit, and
// waits for all of that. Terminals still live then finish with their EXIT
// status (usually SIGKILL). Close returns nil when the sidecar ended
// cleanly, the reason otherwise.
//
// To a sidecar that announced the keepalive, Close first sends a PING.
// A transport (Options.Transport, or a persistent server's bridge) that
// sends nothing back within 2 s, or whose input stays blocked that
// long, is taken for hung and killed, so that Close returns in about
// that time rather than after the keepalive's or its own 15 s bound; a
// local sidecar that does not answer (it holds back frames behind a
// child that does not read, or it is stopped) is told to shut down with
// a signal.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closing = true
	for _, t := range c.live {
		// The sidecar lifts every credit gate as it shuts down.
		t.win.lift()
	}
	for _, p := range c.pending {
		p.t.win.lift()
	}
	// Read under mu: a reconnect installs its connection under mu only
	// if Close has not begun, so this is the last one.
	s := c.stream()
	c.mu.Unlock()
	if c.rc != nil {
		c.rc.stopOnce.Do(func() { close(c.rc.stop) })
	}
	pr := c.probe(s)
	wait := writeCloseBound
	if pr.blocked {
		// A write has held the pipe for the whole probe already.
		wait = 0
	}
	// An error closing the pipe means it is broken already; the end of
	// the stream reports why.
	forced, _ := s.closeInputWithin(wait)
	switch {
	case c.plainLocal() && (forced || !pr.ponged):
		// Our write was blocked, or our frames are not read: the
		// sidecar waits for a child to read its input and reads none
		// of ours, the end of it included (PROTOCOL.md, INPUT), or it
		// is stopped. A signal ends that wait, and the sidecar shuts
		// down as at the end of its input.
		terminate(s.Process())
	case s.Process() != nil && (forced || !pr.heard):
		// A transport (or a persistent server's bridge) that takes
		// none of our input, or sends nothing at all, is hung (ssh
		// stopped, a network gone): its end would come with the
		// keepalive's verdict, or closeBound. What it still had to
		// say is lost with it either way.
		s.abort()
	}

	timer := time.NewTimer(c.closeBound)
	defer timer.Stop()
	select {
	case <-c.done:
	case <-timer.C:
		c.stream().abort()
		<-c.done
	}
	return c.Err()
}
