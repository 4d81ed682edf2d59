package ptyhost

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A process that hosts terminals can die without tearing them down: SIGKILL,
// the OOM killer, a crash in the runtime. The kernel then does two things
// for us: on Linux each direct child gets its parent-death signal
// (Pdeathsig, SIGKILL; the Linux backend only), and each PTY master closes, which hangs the terminal up and
// sends SIGHUP to its foreground process group. Neither reaches a
// background job of an interactive shell that ignores SIGHUP, nor a daemon
// that left the session but kept the PTY as its stdio.
//
// The watchdog closes that gap. It is a second, tiny process (this same
// executable re-run in watchdog mode) that reads a pipe from its parent:
// "+" lines announce a terminal (session id, the leader's start time, the
// PTY slave's identity), "-" lines retire it. The parent holds the only
// write end, so the pipe reaches end of file exactly when the parent is
// gone, however it died. Then the watchdog kills every process of every
// terminal still announced, and exits. After an orderly shutdown nothing is
// announced any more and it just exits.

// WatchdogEnv marks a process started as a watchdog.
const WatchdogEnv = "PTYPLEX_WATCHDOG"

// IsWatchdog reports whether this process was started by StartWatchdog and
// should call RunWatchdog instead of doing its usual job.
func IsWatchdog() bool { return os.Getenv(WatchdogEnv) == "1" }

// Watchdog is the parent's handle on its watchdog process.
type Watchdog struct {
	mu  sync.Mutex
	w   *os.File // the only write end of the watchdog's stdin
	pid int
}

// StartWatchdog starts this executable again in watchdog mode. The watchdog
// gets its own process group, so signals for the parent's group (a ^C, a
// kill of the whole job) leave it alive to clean up after the parent.
func StartWatchdog() (*Watchdog, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("watchdog: find own executable: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), WatchdogEnv+"=1")
	cmd.Stdin = r
	cmd.Stderr = os.Stderr // stdout stays /dev/null: it may be a frame stream
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("watchdog: start %s: %w", exe, err)
	}
	// Reap it when it exits (after we closed the pipe); nobody waits on it
	// otherwise, and a watchdog that outlives us is reaped by init.
	go cmd.Wait()
	return &Watchdog{w: w, pid: cmd.Process.Pid}, nil
}

// Pid is the watchdog's process id.
func (wd *Watchdog) Pid() int { return wd.pid }

// Watch announces p. Call it once p runs and before it can be reaped.
func (wd *Watchdog) Watch(p *Process) {
	start, _ := startTime(p.pid)
	dev, ino, ctime := ttyIdentity(p.pts)
	wd.send(fmt.Sprintf("+ %d %d %s %d %d %d\n", p.pid, start, p.pts, dev, ino, ctime))
}

// Forget retires p. Call it after p's session was killed and before p is
// reaped, so that the watchdog never holds a session id that could be
// reused.
func (wd *Watchdog) Forget(p *Process) { wd.send(fmt.Sprintf("- %d\n", p.pid)) }

// Close ends the watchdog as if we had died: it kills what is still
// announced (normally nothing) and exits.
func (wd *Watchdog) Close() error {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	return wd.w.Close()
}

// sendTimeout bounds a write to a watchdog that does not read (stopped,
// say), so that it can never hold up the caller, which is the sidecar's
// dispatch loop.
const sendTimeout = time.Second

func (wd *Watchdog) send(line string) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	// A failed write means the watchdog is gone or stuck; the kernel's
	// own mechanisms (Pdeathsig, hangup) are all that is left, so go on.
	wd.w.SetWriteDeadline(time.Now().Add(sendTimeout))
	wd.w.WriteString(line)
}

// watched is one announced terminal.
type watched struct {
	sid   int    // the leader's pid, which is the session and group id
	start uint64 // the leader's start time, to notice a reused pid
	pts   string
	dev   uint64 // identity of the PTY slave node, to notice a reused PTY
	ino   uint64
	ctime int64
}

// RunWatchdog is the watchdog's main: it reads announcements from in until
// end of file, then kills what remains and returns the exit status.
func RunWatchdog(in io.Reader) int {
	// Only the end of the pipe ends us: not a ^C or a SIGTERM meant for
	// the job we belong to, nor a hangup of the terminal we started on.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	live := map[int]watched{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 7 && f[0] == "+":
			var w watched
			var err error
			w.sid, err = strconv.Atoi(f[1])
			if err != nil {
				continue
			}
			w.start, _ = strconv.ParseUint(f[2], 10, 64)
			w.pts = f[3]
			w.dev, _ = strconv.ParseUint(f[4], 10, 64)
			w.ino, _ = strconv.ParseUint(f[5], 10, 64)
			w.ctime, _ = strconv.ParseInt(f[6], 10, 64)
			live[w.sid] = w
		case len(f) == 2 && f[0] == "-":
			if pid, err := strconv.Atoi(f[1]); err == nil {
				delete(live, pid)
			}
		}
	}
	if len(live) == 0 {
		return 0
	}
	// Processes may still be forking; kill until a pass finds nobody.
	for pass := 0; pass < 50; pass++ {
		if killWatched(live) == 0 {
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "ptyplex watchdog: processes of %d terminals still alive after 50 passes\n", len(live))
	return 1
}
