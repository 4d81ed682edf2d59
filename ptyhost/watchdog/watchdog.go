//go:build unix

package watchdog

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// Env marks a process started as a watchdog.
const Env = "PTYPLEX_WATCHDOG"

// parentEnv carries the pid of the process the watchdog guards.
const parentEnv = "PTYPLEX_WATCHDOG_PARENT"

// IsWatchdog reports whether this process was started by Start and
// should call Run instead of doing its usual job.
func IsWatchdog() bool { return os.Getenv(Env) == "1" }

// Watchdog is the parent's handle on its watchdog process. If the
// watchdog dies while we run (a program in a terminal, running as our
// user, can kill it), a new one is started and told about every terminal
// still announced; see restart.go.
type Watchdog struct {
	mu      sync.Mutex
	w       *os.File // the only write end of the watchdog's stdin; nil while none runs
	pid     int
	token   string         // this watchdog's token, the first word of every line
	live    map[int]string // announced terminals: leader pid -> its "+" line
	logf    func(string, ...any)
	started time.Time // of the current watchdog, to space out restarts
	closed  bool
	// spawning is set while a replacement is being started without mu,
	// so that a second restart does not start another.
	spawning bool
	// exited is closed once the current watchdog process was reaped.
	exited chan struct{}
}

// Start starts this executable again in watchdog mode. The watchdog
// gets its own process group, so signals for the parent's group (a ^C, a
// kill of the whole job) leave it alive to clean up after the parent.
// logf, if not nil, is told when the watchdog died and was replaced.
func Start(logf func(format string, args ...any)) (*Watchdog, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	wd := &Watchdog{live: map[int]string{}, logf: logf}
	sp, err := spawn()
	if err != nil {
		return nil, err
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.installLocked(sp)
	return wd, nil
}

// spawned is a watchdog process that has its pipe and token, not yet
// the current one.
type spawned struct {
	cmd   *exec.Cmd
	w     *os.File
	token string
}

// installLocked makes sp the current watchdog.
func (wd *Watchdog) installLocked(sp spawned) {
	wd.w, wd.pid, wd.token, wd.started = sp.w, sp.cmd.Process.Pid, sp.token, time.Now()
	wd.exited = make(chan struct{})
	// Reaps it when it exits, and replaces it if we did not end it.
	go wd.monitor(sp.cmd, sp.w, wd.exited)
}

// spawn starts a watchdog process and hands it its pipe once it is not
// dumpable. It holds no lock: the handoff may wait up to readyTimeout
// for the new process, and Watch and Forget, called from the sidecar's
// dispatch loop and its terminals, must not wait with it.
func spawn() (spawned, error) {
	exe, err := os.Executable()
	if err != nil {
		return spawned{}, fmt.Errorf("watchdog: find own executable: %w", err)
	}
	if _, err := os.Stat(exe); err != nil {
		// A binary run from a file that has no path (the persistent
		// server after a live upgrade runs from a memfd) is still
		// reachable as /proc/self/exe where there is one.
		if _, perr := os.Stat("/proc/self/exe"); perr == nil {
			exe = "/proc/self/exe"
		}
	}
	// The watchdog starts without the announcement pipe, which it gets
	// once it is not dumpable (see handoff.go).
	conn, theirs, err := handoffPair()
	if err != nil {
		return spawned{}, fmt.Errorf("watchdog: %w", err)
	}
	defer conn.Close()
	cmd := exec.Command(exe)
	// Named as we were, not "/proc/self/exe": ps, pgrep -x and killall
	// find it as they find us.
	cmd.Args[0] = os.Args[0]
	// The parent's pid travels in the environment: under load the watchdog
	// may start running only after its parent died, when getppid(2) would
	// name init instead.
	cmd.Env = append(os.Environ(), Env+"=1", parentEnv+"="+strconv.Itoa(os.Getpid()), handoffEnv+"=3")
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr // stdout stays /dev/null: it may be a frame stream
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		return spawned{}, fmt.Errorf("watchdog: start %s: %w", exe, err)
	}
	fail := func(err error) (spawned, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return spawned{}, fmt.Errorf("watchdog (pid %d): %w; killed it", cmd.Process.Pid, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	// The token is the pipe's first line, written before the watchdog
	// has the pipe: whatever else opens the pipe later (through
	// /proc/PID/fd of ours, which only root can) cannot read it from
	// there, and lines without it are ignored.
	token, err := newToken()
	if err == nil {
		_, err = w.WriteString("token " + token + "\n")
	}
	if err == nil {
		err = handOver(conn, r)
	}
	if err != nil {
		w.Close()
		return fail(err)
	}
	return spawned{cmd: cmd, w: w, token: token}, nil
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
func (wd *Watchdog) Watch(p *ptyhost.Process) {
	id := p.Identity()
	line := "+ " + id.String() + "\n"
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.live[id.SID] = line
	wd.sendLocked(line)
}

// Forget retires p. Call it after p's session was killed and before p is
// reaped, so that the watchdog never holds a session id that could be
// reused.
func (wd *Watchdog) Forget(p *ptyhost.Process) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	delete(wd.live, p.Pid())
	wd.sendLocked(fmt.Sprintf("- %d\n", p.Pid()))
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

// Exited is closed once the watchdog process current when it is called
// has exited and was reaped: after Close, a caller that is about to
// execve (the persistent server's live upgrade) waits for it, so that
// the new image does not inherit it as a zombie it knows nothing of.
func (wd *Watchdog) Exited() <-chan struct{} {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	return wd.exited
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
