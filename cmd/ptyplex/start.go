//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/inherited"
	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/internal/session/shellinteg"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/session"
	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

func init() {
	register("start", "start a program in a new PTY session (daemon by default)", runStart)
}

// daemonEnv marks the re-executed daemon process and names the descriptor
// on which it reports readiness to the `start` that launched it. Go cannot
// fork, so daemon mode runs this binary again, detached.
const daemonEnv = "PTYPLEX_INTERNAL_DAEMON_FD"

// readyTimeout bounds how long `start` waits for the daemon to report.
const readyTimeout = 15 * time.Second

const startAbout = `
Starts COMMAND in a new pseudo-terminal behind a session daemon and prints:
  Socket: <path>
  PID: <daemon pid>
  Auto-generated: true|false
By default the daemon runs in the background, detached from this terminal,
and start returns once the socket accepts connections. Without --socket the
socket is created as 'socket' in a fresh private /tmp/interminai-XXXX
directory, which stop removes; a socket path you give is left in place.
--emulator custom answers plain text everywhere (no colours) and runs the
program with TERM=ansi, as interminai's custom emulator does; xterm, the
default (alacritty is accepted as another name for it), keeps colours and
attributes and sets TERM=xterm-256color.
--idle-exit D (a ptyplex addition) ends the session by itself once the
program has exited and D has passed with no request (status, output, ...)
since the exit or the last request, and nobody is attached; the socket
(when auto-generated) and the registry entry go as on stop. Without it a
finished session waits for stop for ever.
--shell-integration (a ptyplex addition) starts bash or zsh with a
generated startup file (in a private directory removed on stop) that runs
your own ~/.bashrc or .zshrc first and then makes the shell mark its
prompts, commands and exit codes (OSC 133): what 'ptyplex run' and
'ptyplex commands' read. Your own files are not touched.
A session whose record for 'ptyplex list' cannot be written (a full disk)
runs all the same; a line on stderr says that list will not show it, and
why.

Example:
  ptyplex start --size 100x30 -- vim -u NONE notes.txt
  ptyplex start --shell-integration -- bash`

func runStart(args []string) int {
	c := newCLI("start", "ptyplex start [--socket PATH] [--size WxH] [--emulator xterm|custom] [--scrollback N] [--debug-buffer N] [--pty-dump FILE] [--idle-exit D] [--shell-integration] [--no-daemon] -- COMMAND [ARGS...]", startAbout, false)
	c.positional = true
	c.fs.StringVar(&c.socket, "socket", "", "session socket `path` (default: /tmp/interminai-XXXX/socket, auto-generated)")
	size := c.fs.String("size", "80x24", "terminal size as `COLSxROWS`")
	emulator := c.fs.String("emulator", "xterm", "terminal emulator: xterm (colours) or custom (plain text)")
	scrollback := c.fs.Int("scrollback", session.DefaultScrollback, "scrollback capacity in `lines` (0 keeps none)")
	debugBuf := c.fs.Int("debug-buffer", session.DefaultDebugBuffer, "how many unhandled escape sequences DEBUG keeps (0 keeps none, counting them as dropped)")
	dump := c.fs.String("pty-dump", "", "append every raw byte read from the PTY to `FILE` (created 0600; an existing one must be a regular file of yours, and is made private (0600) if others may read or write it; links, FIFOs and hard-linked files are refused; the first failed write, on a full disk say, ends the dump, as status then says)")
	noDaemon := c.fs.Bool("no-daemon", false, "run the daemon in the foreground until stop")
	c.fs.Bool("color", false, "accepted for interminai's older scripts, which chose colour at start; output has colour by default (output --no-color)")
	idleExit := c.fs.Duration("idle-exit", 0, "end the session `DURATION` after the program exited with no request since (0: never)")
	integ := c.fs.Bool("shell-integration", false, "make the shell (bash or zsh) report its prompts, commands and exit codes (OSC 133) for 'ptyplex run' and 'ptyplex commands', through a generated startup file that runs yours first")
	if done, code := c.parse(args); done {
		return code
	}
	cols, rows, err := wire.ParseSize(*size)
	if err != nil {
		// Exit 1, as interminai's start fails on a bad size (its parser
		// takes the flag as any string; the usage errors' 2 is clap's).
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return exitFail
	}
	var plain bool
	switch *emulator {
	case "xterm", "alacritty": // alacritty: interminai's older name for its full emulator
	case "custom":
		plain = true
	default:
		return c.usageError("Invalid emulator %q: expected xterm or custom", *emulator)
	}
	if c.fs.NArg() == 0 {
		// Scripts match the first sentence (the wording of interminai's
		// argument parser); the rest says what to add.
		return c.usageError("the following required arguments were not provided: COMMAND (the command argument is required: ptyplex start [flags] -- COMMAND [ARGS...])")
	}
	if *idleExit < 0 {
		return c.usageError("invalid --idle-exit %v: must not be negative", *idleExit)
	}
	if *scrollback < 0 || *debugBuf < 0 {
		return c.usageError("--scrollback and --debug-buffer must be 0 or more")
	}
	if *integ {
		if err := shellinteg.Check(c.fs.Args()); err != nil {
			return c.usageError("%v", err)
		}
	}
	seqs := *debugBuf
	if seqs == 0 {
		seqs = -1 // Config's 0 is the default; the flag's means none
	}
	cfg := session.Config{
		SocketPath: c.socket, Command: c.fs.Args(),
		Cols: cols, Rows: rows,
		Scrollback: *scrollback, DebugBuffer: seqs,
		Plain: plain, PTYDump: *dump,
		IdleExit: *idleExit, ShellIntegration: *integ,
	}
	if fdText := os.Getenv(daemonEnv); fdText != "" {
		// The daemon child: the start that launched it has said what
		// needed saying (noteExposed).
		readyFD, _ := strconv.Atoi(fdText)
		closeInherited(readyFD)
		clearSignalMask()
		return runDaemonChild(cfg, fdText)
	}
	if *dump != "" {
		noteExposed("--pty-dump", *dump)
	}
	if *noDaemon {
		closeInherited()
		clearSignalMask()
		return runForeground(cfg)
	}
	return launchDaemon(args)
}

// noteExposed tells the user, on stderr, that an existing file named by
// flag will be made private (safefile clears its group and other bits on
// opening it), since that changes a file of theirs.
func noteExposed(flag, path string) {
	if mode, ok := safefile.Exposed(path); ok {
		fmt.Fprintf(os.Stderr, "ptyplex: %s %s: other users may read or write it (mode %04o); it is made private (%04o), since what goes there may include passwords typed into the terminal\n",
			flag, path, uint32(mode), uint32(mode)&0o700)
	}
}

// closeInherited closes the descriptors our caller left open for us
// (beyond stdio and keep): the daemon would hold them for the session's
// lifetime and pass them to its program. See package inherited.
func closeInherited(keep ...int) {
	if _, err := inherited.Close(keep...); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex: %v\n", err)
	}
}

// clearSignalMask gives the session's program an empty signal mask and
// default dispositions whatever we inherited; it may re-execute us (with
// the same arguments, environment and descriptors) to do so.
func clearSignalMask() {
	if err := ptyhost.ClearInheritedSignalMask(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex: %v\n", err)
	}
}

// forbidInspection makes the process that serves a session non-dumpable
// before it starts the session's program, as the sidecar is: the program
// runs as our user, and could otherwise read the shell-integration key
// from our memory (and so forge the marks run trusts) or open the PTY
// master through /proc/PID/fd. The program's execve makes it dumpable
// again, so nothing it starts is affected.
func forbidInspection() {
	if err := ptyhost.ForbidInspection(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex: %v\n", err)
	}
}

// runForeground serves the session in this process until STOP or a
// terminating signal.
func runForeground(cfg session.Config) int {
	forbidInspection()
	d, err := session.New(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return exitFail
	}
	for _, w := range d.Warnings() {
		fmt.Fprintf(os.Stderr, "ptyplex: %s\n", w)
	}
	printStarted(os.Stdout, d.SocketPath(), os.Getpid(), d.AutoGenerated())
	serve(d)
	return exitOK
}

// serve runs d until STOP; SIGTERM, SIGINT and SIGHUP to the daemon end the
// session the same way, so neither the child nor the socket is left behind.
func serve(d *session.Daemon) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	served := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			d.Shutdown()
		case <-served:
		}
	}()
	d.Serve()
	close(served)
}

func printStarted(w io.Writer, sock string, pid int, auto bool) {
	fmt.Fprintf(w, "Socket: %s\nPID: %d\nAuto-generated: %t\n", sock, pid, auto)
}

// launchDaemon runs this binary again as a detached daemon (new session,
// stdio on /dev/null) and waits until it reports that its socket listens.
// The report comes through an inherited pipe: "ready <auto> <quoted socket>" or
// "error <message>", after any number of "warn <message>" lines, which
// are passed on to our stderr (the daemon's goes to /dev/null); end of
// file without either means the daemon died.
func launchDaemon(args []string) int {
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: cannot create readiness pipe: %v\n", err)
		return exitFail
	}
	defer r.Close()
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	cmd := exec.Command(self, append([]string{"start"}, args...)...)
	cmd.Env = append(os.Environ(), daemonEnv+"=3")
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the daemon
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Stdin, Stdout, Stderr left nil: os/exec connects them to /dev/null.
	if err := cmd.Start(); err != nil {
		w.Close()
		fmt.Fprintf(os.Stderr, "Error: cannot start daemon: %v\n", err)
		return exitFail
	}
	w.Close()
	pid := cmd.Process.Pid
	// The daemon outlives us; its exit status goes to init, not to us.
	cmd.Process.Release()

	r.SetReadDeadline(time.Now().Add(readyTimeout))
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	for strings.HasPrefix(line, "warn ") && strings.HasSuffix(line, "\n") {
		fmt.Fprintf(os.Stderr, "ptyplex: %s", strings.TrimPrefix(line, "warn "))
		line, err = br.ReadString('\n')
	}
	line = strings.TrimSuffix(line, "\n")
	switch {
	case strings.HasPrefix(line, "ready "):
		auto, quoted, _ := strings.Cut(strings.TrimPrefix(line, "ready "), " ")
		sock, err := strconv.Unquote(quoted)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error: daemon (pid %d) reported its socket unreadably: %s\n", pid, quoted)
			return exitFail
		}
		printStarted(os.Stdout, sock, pid, auto == "true")
		return exitOK
	case strings.HasPrefix(line, "error "):
		fmt.Fprintf(os.Stderr, "Error: %s\n", strings.TrimPrefix(line, "error "))
		return exitFail
	case errors.Is(err, os.ErrDeadlineExceeded):
		fmt.Fprintf(os.Stderr, "Error: daemon (pid %d) did not become ready within %v\n", pid, readyTimeout)
		syscall.Kill(pid, syscall.SIGKILL)
		return exitFail
	default:
		fmt.Fprintf(os.Stderr, "Error: daemon (pid %d) exited before it was ready\n", pid)
		return exitFail
	}
}

// runDaemonChild is the re-executed daemon: it sets up the session,
// reports on the readiness descriptor, then serves.
func runDaemonChild(cfg session.Config, fdText string) int {
	// Our children (the session's program) must not see the marker, or a
	// nested `ptyplex start` would think it is a daemon.
	os.Unsetenv(daemonEnv)
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return exitFail
	}
	unix.CloseOnExec(fd) // never leak the pipe into the session's program
	ready := os.NewFile(uintptr(fd), "ready")
	forbidInspection()
	d, err := session.New(cfg)
	if err != nil {
		fmt.Fprintf(ready, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		ready.Close()
		return exitFail
	}
	for _, w := range d.Warnings() {
		fmt.Fprintf(ready, "warn %s\n", strings.ReplaceAll(w, "\n", " "))
	}
	// Quoted: a path may hold a newline, which would end the report.
	fmt.Fprintf(ready, "ready %t %s\n", d.AutoGenerated(), strconv.Quote(d.SocketPath()))
	ready.Close()
	serve(d)
	return exitOK
}
