//go:build unix

package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/internal/session/shellinteg"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/session/wire"
)

// stopGrace is how long STOP lets the child react to SIGHUP/SIGTERM before
// it sends SIGKILL.
const stopGrace = 2 * time.Second

// Daemon is one running session: a child in a PTY, its screen, and the
// socket that serves requests about them.
type Daemon struct {
	cfg     Config
	ln      *net.UnixListener
	sock    string
	autoDir string // "" for a user-given socket path
	proc    *ptyhost.Process
	dump    *ptyDump // nil without --pty-dump (dump.go)
	st      *state
	queue   *queue
	// arrivals puts requests read on different connections in the
	// order they arrived (arrivals.go).
	arrivals arrivals
	replies  *replyQueue
	inputMu  sync.Mutex     // serialises PTY writes: INPUT and query replies
	limits   limits         // connections and request bytes held (limits.go)
	async    sync.WaitGroup // WAITs answered off the handler (async.go)
	writes   sync.WaitGroup // the rest of long answers (answer, conn.go)

	readerDone chan struct{} // closed by readPTY
	exited     chan struct{} // closed by watchExit
	done       chan struct{} // closed when the daemon shuts down
	stopOnce   sync.Once
	stopReq    chan *request // a STOP, or nil for a signal, handed to Serve
	regFile    string        // our entry in the session registry (registry.go)
	warnings   []string      // what New could not do, for its caller to tell (Warnings)
	integDir   string        // shell integration's generated files, removed at the first mark and at teardown
	markKey    string        // the key the integration's marks carry ("" without integration)
	keepNoSeqs bool          // DebugBuffer < 0: DEBUG lists no unhandled sequence, only counts them
	// runTurn lets one RUN at a time type and wait (commands.go): two
	// typed at the same prompt would run as one command line.
	runTurn   chan struct{}
	idle      idleClock    // when the last request came (idle.go)
	readBytes atomic.Int64 // bytes the PTY reader has read (inputwait.go)
	reads     readLog      // the tokens of changes reads, under st.mu (changes.go)

	// parkHook, when set (by tests and benchmarks), runs each time a WAIT
	// is about to block, so a measurement can trigger output only then.
	parkHook func()
}

// New listens on the session socket and starts the child. When it returns
// without error the socket accepts connections; call Serve next.
func New(cfg Config) (*Daemon, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := &Daemon{
		cfg:        cfg,
		queue:      newQueue(),
		replies:    newReplyQueue(),
		readerDone: make(chan struct{}),
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
		stopReq:    make(chan *request, 1),
		runTurn:    make(chan struct{}, 1),
	}
	if cfg.PTYDump != "" {
		// The dump often lives in /tmp: see safefile for what is refused.
		f, err := safefile.OpenAppend(cfg.PTYDump)
		if err != nil {
			return nil, fmt.Errorf("open pty dump: %w", err)
		}
		d.dump = &ptyDump{f: f}
	}
	var err error
	d.ln, d.sock, d.autoDir, err = listen(cfg.SocketPath)
	if err != nil {
		d.closeDump()
		return nil, err
	}
	argv, env := cfg.Command, childEnv(cfg)
	if cfg.ShellIntegration {
		argv, env, err = d.integrate(argv, env)
		if err != nil {
			d.ln.Close()
			d.removeSocket()
			d.unbindUserSocket()
			d.closeDump()
			return nil, err
		}
	}
	d.proc, err = ptyhost.Start(ptyhost.Config{
		Cmd: argv[0], Args: argv[1:],
		Dir: cfg.Dir, Env: env,
		Cols: cfg.Cols, Rows: cfg.Rows,
	})
	if err != nil {
		d.removeIntegration()
		d.ln.Close()
		d.removeSocket()
		d.unbindUserSocket()
		d.closeDump()
		return nil, err
	}
	sb := cfg.Scrollback
	if sb == 0 {
		sb = -1 // the emulator's 0 means its default; ours means none
	}
	// The xterm emulator keeps what a clear erases in the scrollback, as
	// interminai's (alacritty) does; its custom one, like ours, does not.
	seqs := cfg.DebugBuffer
	if seqs < 0 {
		// The emulator keeps at least one (its 0 means its default);
		// debug() hides it and counts it as dropped.
		seqs, d.keepNoSeqs = 1, true
	}
	d.st = newState(screen.New(cfg.Cols, cfg.Rows, screen.Options{Scrollback: sb, Unhandled: seqs,
		ClearToScrollback: !cfg.Plain}))
	// Only the shell's own marks count: the rest of the output (a file it
	// prints, a remote host's) could otherwise end a command or fake a
	// prompt that RUN would type into.
	d.st.scr.RequireMarkKey(d.markKey)
	// Best effort: without its record the session is only missing from
	// list, which is no reason to refuse it; but whoever starts it is told.
	if dirOK, err := d.register(); err != nil {
		what := "'ptyplex list' will not show it"
		if dirOK && d.autoDir != "" && os.Getenv(wire.RuntimeDirEnv) == "" {
			// list also looks at the sockets in /tmp/interminai-*.
			what = "'ptyplex list' will show it only by its socket, without its command"
		}
		d.warnings = append(d.warnings, fmt.Sprintf("the session runs, but %s: %v", what, err))
	}
	go d.readPTY()
	go d.watchExit()
	go d.writeReplies(d.done)
	if cfg.IdleExit > 0 {
		go d.watchIdle()
	}
	go d.accept()
	return d, nil
}

// Warnings are one-line sentences on what New could not do but the
// session runs without (its record for list), for whoever started it.
func (d *Daemon) Warnings() []string { return d.warnings }

// SocketPath is the absolute path of the session socket.
func (d *Daemon) SocketPath() string { return d.sock }

// AutoGenerated reports whether the socket path was generated (and so is
// removed on STOP).
func (d *Daemon) AutoGenerated() bool { return d.autoDir != "" }

// Serve executes requests one at a time, in arrival order (WAITs are
// answered on goroutines of their own, async.go), until a STOP
// request or Shutdown; then it ends the child, removes an auto-generated
// socket, answers the STOP and returns.
func (d *Daemon) Serve() {
	for {
		r := d.queue.pop(d.done)
		if r == nil {
			break
		}
		if d.handle(r) {
			break
		}
	}
	d.stop()
	d.async.Wait() // pending WAITs answer "shutting down" once done is closed
	var stopReq *request
	select {
	case stopReq = <-d.stopReq:
	default:
	}
	d.teardown()
	if stopReq != nil {
		respond(stopReq.conn, wire.MessageData{Message: "Shutting down"}, nil)
	}
	d.writes.Wait() // answers given before the STOP reach their clients
}

// Shutdown asks Serve to end the session as a STOP would (used on
// SIGTERM/SIGINT/SIGHUP to the daemon). It does not wait.
func (d *Daemon) Shutdown() { d.stop() }

// stop ends the request loop. The listener stays open until teardown is
// done, so that a request made meanwhile (the program may take seconds to
// end) is answered "Daemon is shutting down" rather than refused as if
// the daemon were gone.
func (d *Daemon) stop() {
	d.stopOnce.Do(func() {
		close(d.done)
	})
}

// accept is the accept loop goroutine; it ends when the listener closes.
func (d *Daemon) accept() {
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and friends: drop this one and keep serving.
			select {
			case <-d.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if !d.limits.admit() {
			busyConnections(c)
			continue
		}
		cc := &clientConn{UnixConn: c, lim: &d.limits}
		ok, err := peerAllowed(c)
		if err != nil || !ok {
			go refuse(cc)
			continue
		}
		go d.readRequest(cc, d.arrivals.add(cc))
	}
}

// teardown ends the child and everything left of its session, releases
// the PTY and removes an auto-generated socket.
func (d *Daemon) teardown() {
	for _, r := range d.queue.close() {
		respond(r.conn, nil, wire.RequestError("Daemon is shutting down"))
	}
	select {
	case <-d.exited:
	default:
		// SIGHUP is what a closing terminal sends (interactive shells ignore
		// SIGTERM but not SIGHUP); SIGTERM is what the protocol promises.
		d.proc.SignalGroup(syscall.SIGHUP)
		d.proc.SignalGroup(syscall.SIGTERM)
		d.proc.Signal(syscall.SIGTERM)
		// A stopped program (SIGSTOP, SIGTSTP) would only see those once
		// SIGKILL ends it; continue it, as the kernel does for a stopped
		// group whose terminal hangs up, so it can act on them first.
		d.proc.SignalGroup(syscall.SIGCONT)
		d.proc.Signal(syscall.SIGCONT)
		t := time.NewTimer(stopGrace)
		select {
		case <-d.exited:
		case <-t.C:
			d.proc.SignalGroup(syscall.SIGKILL)
			d.proc.Signal(syscall.SIGKILL)
			t.Reset(stopGrace)
			select {
			case <-d.exited:
			case <-t.C: // stuck in the kernel; Reap below still collects it
			}
		}
		t.Stop()
	}
	// Background jobs in other process groups, and anything else still
	// holding the terminal, go too. The zombie child keeps the session id
	// reserved until Reap.
	d.proc.KillSession(syscall.SIGKILL, true)
	d.proc.Reap()
	d.proc.Close()
	d.closeDump()
	d.removeIntegration()
	d.removeSocket()
	d.unregister()
	d.ln.Close()
}

// integrate writes the shell-integration startup files and returns the
// shell's argv and environment that use them.
func (d *Daemon) integrate(argv []string, env map[string]string) ([]string, map[string]string, error) {
	s, err := shellinteg.Prepare(argv, func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	})
	if err != nil {
		return nil, nil, err
	}
	d.integDir, d.markKey = s.Dir, s.Key
	merged := make(map[string]string, len(env)+len(s.Env))
	for k, v := range env {
		merged[k] = v
	}
	for k, v := range s.Env {
		merged[k] = v
	}
	return s.Argv, merged, nil
}

func (d *Daemon) removeIntegration() {
	if d.integDir != "" {
		os.RemoveAll(d.integDir)
	}
}

func (d *Daemon) removeSocket() {
	if d.autoDir != "" {
		os.Remove(d.sock)
		os.Remove(d.autoDir)
	}
}

// unbindUserSocket removes a user-given socket that this daemon bound but
// never served (the program could not start): left behind, it would only
// make the next client's error "connection refused" instead of "no such
// file". STOP leaves a served one in place, as the protocol says. Only a
// socket is removed, never what may have been put in its place.
func (d *Daemon) unbindUserSocket() {
	if d.autoDir != "" {
		return
	}
	if fi, err := os.Lstat(d.sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(d.sock)
	}
}

func (d *Daemon) closeDump() {
	d.dump.close()
}
