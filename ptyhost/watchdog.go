package ptyhost

import (
	"bufio"
	"crypto/subtle"
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

// watchdogParentEnv carries the pid of the process the watchdog guards.
const watchdogParentEnv = "PTYPLEX_WATCHDOG_PARENT"

// IsWatchdog reports whether this process was started by StartWatchdog and
// should call RunWatchdog instead of doing its usual job.
func IsWatchdog() bool { return os.Getenv(WatchdogEnv) == "1" }

// Watchdog is the parent's handle on its watchdog process. If the
// watchdog dies while we run (a program in a terminal, running as our
// user, can kill it), a new one is started and told about every terminal
// still announced; see watchdog_restart.go.
type Watchdog struct {
	mu      sync.Mutex
	w       *os.File // the only write end of the watchdog's stdin; nil while none runs
	pid     int
	token   string         // this watchdog's token, the first word of every line
	live    map[int]string // announced terminals: leader pid -> its "+" line
	logf    func(string, ...any)
	started time.Time // of the current watchdog, to space out restarts
	closed  bool
}

// StartWatchdog starts this executable again in watchdog mode. The watchdog
// gets its own process group, so signals for the parent's group (a ^C, a
// kill of the whole job) leave it alive to clean up after the parent.
// logf, if not nil, is told when the watchdog died and was replaced.
func StartWatchdog(logf func(format string, args ...any)) (*Watchdog, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	wd := &Watchdog{live: map[int]string{}, logf: logf}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if err := wd.spawnLocked(); err != nil {
		return nil, err
	}
	return wd, nil
}

// spawnLocked starts a watchdog process and makes it the current one.
func (wd *Watchdog) spawnLocked() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("watchdog: find own executable: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close()
	// The token is the pipe's first line, written before the watchdog
	// runs: whatever else opens the pipe later (through /proc/PID/fd, as
	// a program in a terminal can) cannot read it from there, and lines
	// without it are ignored.
	token, err := newToken()
	if err == nil {
		_, err = w.WriteString("token " + token + "\n")
	}
	if err != nil {
		w.Close()
		return fmt.Errorf("watchdog: token: %w", err)
	}
	cmd := exec.Command(exe)
	// The parent's pid travels in the environment: under load the watchdog
	// may start running only after its parent died, when getppid(2) would
	// name init instead.
	cmd.Env = append(os.Environ(), WatchdogEnv+"=1", watchdogParentEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin = r
	cmd.Stderr = os.Stderr // stdout stays /dev/null: it may be a frame stream
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("watchdog: start %s: %w", exe, err)
	}
	wd.w, wd.pid, wd.token, wd.started = w, cmd.Process.Pid, token, time.Now()
	// Reaps it when it exits, and replaces it if we did not end it.
	go wd.monitor(cmd, w)
	return nil
}

// Pid is the current watchdog's process id (0 while none runs).
func (wd *Watchdog) Pid() int {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w == nil {
		return 0
	}
	return wd.pid
}

// Watch announces p. Call it once p runs and before it can be reaped.
func (wd *Watchdog) Watch(p *Process) {
	start, _ := startTime(p.pid)
	dev, ino, ctime := ttyIdentity(p.pts)
	line := fmt.Sprintf("+ %d %d %s %d %d %d\n", p.pid, start, p.pts, dev, ino, ctime)
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.live[p.pid] = line
	wd.sendLocked(line)
}

// Forget retires p. Call it after p's session was killed and before p is
// reaped, so that the watchdog never holds a session id that could be
// reused.
func (wd *Watchdog) Forget(p *Process) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	delete(wd.live, p.pid)
	wd.sendLocked(fmt.Sprintf("- %d\n", p.pid))
}

// Close ends the watchdog in an orderly way: it says goodbye, so that the
// watchdog knows we did not die, then closes the pipe. The watchdog still
// kills whatever is announced (normally nothing) and exits. No new one is
// started.
func (wd *Watchdog) Close() error {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.closed = true
	if wd.w == nil {
		return nil
	}
	wd.sendLocked(goodbye + "\n")
	return wd.w.Close()
}

// goodbye is the last line of an orderly shutdown. A pipe that ends
// without it means the parent died (SIGKILL, the OOM killer, a crash), and
// the watchdog says so on stderr, which the parent shares: nothing else
// could explain why the parent's stream stopped.
const goodbye = "bye"

// sendTimeout bounds a write to a watchdog that does not read (stopped,
// say), so that it can never hold up the caller, which is the sidecar's
// dispatch loop.
const sendTimeout = time.Second

func (wd *Watchdog) sendLocked(line string) {
	if wd.w == nil {
		return // between a death and its replacement, which gets wd.live
	}
	// A failed write means the watchdog is gone or stuck; monitor
	// replaces a dead one, and the kernel's own mechanisms (Pdeathsig,
	// hangup) remain, so go on.
	wd.w.SetWriteDeadline(time.Now().Add(sendTimeout))
	wd.w.WriteString(wd.token + " " + line)
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
	parent := os.Getenv(watchdogParentEnv)
	// Nobody of our uid may read our memory or reopen our stdin through
	// /proc/PID/fd/0 (which would let them read or forge lines); a kill
	// is still possible, and the parent then starts a new watchdog.
	forbidInspection()
	live := map[int]watched{}
	orderly := false
	sc := announcementScanner(&pacedReader{r: in, pace: watchdogPace, now: time.Now, sleep: time.Sleep})
	token := ""
	if sc.Scan() {
		if t, ok := strings.CutPrefix(sc.Text(), "token "); ok {
			token = t
		}
	}
	ignored := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if token == "" || len(f) == 0 || subtle.ConstantTimeCompare([]byte(f[0]), []byte(token)) != 1 {
			if ignored == 0 {
				fmt.Fprintf(os.Stderr, "ptyplex watchdog: ignoring a line without this run's token (not from the sidecar)\n")
			}
			ignored++
			continue
		}
		f = f[1:]
		switch {
		case len(f) == 1 && f[0] == goodbye:
			orderly = true
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
	if ignored > 0 {
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: ignored %d lines without the token\n", ignored)
	}
	if !orderly {
		fmt.Fprintf(os.Stderr, "ptyplex watchdog: pid %s ended without shutting down (killed or crashed); terminals still live: %d\n", parent, len(live))
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

// watchdogPace is how long the watchdog waits after a read that brought
// lines and emptied the pipe before it reads again. A busy parent announces
// and retires terminals hundreds of times a second, and a watchdog woken
// for every line cost about as much CPU as the rest of a terminal's
// teardown (a wake-up is a scheduler round trip on both sides, several VM
// exits on a virtual machine). Paced, the lines wait in the pipe (a line is
// 40 to 90 bytes, the parent writes at most a few thousand a second, the
// pipe holds 64 KiB) and are read together, and the parent's writes find
// no reader to wake. A backlog is read at once, 64 KiB at a time (a read
// that fills the buffer is not paced), so a parent that announces faster
// than that, or re-announces every terminal to a new watchdog, never waits
// on the pace. An idle watchdog still sleeps in read(2) until a line comes,
// and the first line after a quiet spell is read at once. The price: after
// the parent dies, the kill begins up to this much later.
const watchdogPace = 20 * time.Millisecond

// announceBuf is the most one read of the announcement pipe takes: a
// pipe's default capacity, so that one read empties a full pipe.
const announceBuf = 64 << 10

// announcementScanner splits the watchdog's input into lines, reading it
// announceBuf at a time (bufio.Scanner's own first buffer is 4 KiB: paced
// reads of that size drained 200 KB a second).
func announcementScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, announceBuf), announceBuf)
	return sc
}

// pacedReader reads from r no sooner than pace after its last read that
// returned data without filling the caller's buffer. After a read that
// filled it, more is likely waiting, and the next read goes at once.
type pacedReader struct {
	r     io.Reader
	pace  time.Duration
	now   func() time.Time
	sleep func(time.Duration)
	last  time.Time // of the last short read that returned data; zero otherwise
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if !p.last.IsZero() {
		if wait := p.pace - p.now().Sub(p.last); wait > 0 {
			p.sleep(wait)
		}
	}
	n, err := p.r.Read(b)
	if n > 0 && n < len(b) {
		p.last = p.now()
	} else {
		p.last = time.Time{}
	}
	return n, err
}
