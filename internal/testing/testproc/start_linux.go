package testproc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
)

// grace is how long finish and the sweeper let marked processes end on
// their own (a daemon told to stop, a program reaped by its sidecar)
// before they count as left behind.
const grace = 5 * time.Second

// Start marks this test binary's future children and starts the sweeper;
// see the package comment. In the sweeper process it does not return.
func Start() (finish func(code int) int) {
	if tok := os.Getenv(sweepEnv); tok != "" {
		os.Exit(sweep(tok))
	}
	SetGorace("")
	tok := fmt.Sprintf("t%d.%d", os.Getpid(), time.Now().UnixNano())
	os.Setenv(OwnerEnv, strings.TrimSpace(os.Getenv(OwnerEnv)+" "+tok))

	var sweeper *exec.Cmd
	if exe, err := os.Executable(); err == nil {
		sweeper = exec.Command(exe)
		sweeper.Env = append(os.Environ(), sweepEnv+"="+tok)
		sweeper.Stdout, sweeper.Stderr = os.Stderr, os.Stderr
		// Its own group: a ^C to the test run must not take it too.
		sweeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if lifeline, err = sweeper.StdinPipe(); err == nil {
			err = sweeper.Start()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testproc: no sweeper for this test binary:", err)
			sweeper, lifeline = nil, nil
		}
	}
	return func(code int) int {
		self := os.Getpid()
		if sweeper != nil {
			self = sweeper.Process.Pid // skipped below as well as us
		}
		left := settle(tok, grace, os.Getpid(), self)
		if len(left) > 0 {
			fmt.Fprintf(os.Stderr, "testproc: %d processes this test binary started were still running at its end (killed):\n%s",
				len(left), describe(left))
			kill(left)
			code = 1
		}
		if sweeper != nil {
			lifeline.Close()
			sweeper.Wait()
		}
		return code
	}
}

// lifeline is the test binary's end of the sweeper's stdin; nil in the
// sweeper, or when it could not be started.
var lifeline io.WriteCloser

// tellSweeper passes SpareDescendantsOf's pid on to the sweeper, as a
// line on its stdin.
func tellSweeper(pid int) {
	if lifeline != nil {
		fmt.Fprintf(lifeline, "spare %d\n", pid)
	}
}

// sweep runs in the sweeper: it waits for the test binary to go away (its
// end of the pipe closes), then ends what still carries tok. What the
// test binary sends on the pipe meanwhile is SpareDescendantsOf's pid.
func sweep(tok string) int {
	b, _ := io.ReadAll(os.Stdin)
	for _, line := range strings.Split(string(b), "\n") {
		if pid, ok := strings.CutPrefix(line, "spare "); ok {
			spareUnder, _ = strconv.Atoi(pid)
		}
	}
	left := Owned(tok, os.Getpid())
	if len(left) == 0 {
		return 0
	}
	fmt.Fprintf(os.Stderr, "testproc: the test binary ended with %d of its processes running; ending them:\n%s", len(left), describe(left))
	// Nobody will stop them now: SIGTERM lets a daemon end its session's
	// programs as on STOP; what is still there after the grace is killed.
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	if left = settle(tok, grace, os.Getpid()); len(left) > 0 {
		kill(left)
	}
	return 0
}

// settle waits up to d for the processes marked with tok (other than
// skip) to exit, and returns the ones still running.
func settle(tok string, d time.Duration, skip ...int) []int {
	end := time.Now().Add(d)
	left := Owned(tok, skip...)
	for _, pid := range left {
		procwait.Gone(pid, time.Until(end))
	}
	// New ones may have started meanwhile (a daemon's last child).
	return Owned(tok, skip...)
}

// kill ends each process and the group it leads, if it leads one (a
// daemon leads its session), and waits briefly for them.
func kill(pids []int) {
	for _, pid := range pids {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
	end := time.Now().Add(grace)
	for _, pid := range pids {
		procwait.Gone(pid, time.Until(end))
	}
}

// Owned lists the live processes whose environment carries tok in
// OwnerEnv, except skip.
func Owned(tok string, skip ...int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	want := []byte(OwnerEnv + "=")
	var pids []int
next:
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		for _, s := range skip {
			if pid == s {
				continue next
			}
		}
		if spareUnder > 0 && descends(pid, spareUnder) {
			continue
		}
		env, err := os.ReadFile("/proc/" + n + "/environ")
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, want) && hasToken(string(kv[len(want):]), tok) && procwait.Alive(pid) {
				pids = append(pids, pid)
				break
			}
		}
	}
	sort.Ints(pids)
	return pids
}

// descends reports whether pid is under ancestor (a child, a child's
// child, ...), following parents in /proc until init or one unreadable.
func descends(pid, ancestor int) bool {
	for pid > 1 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid ...: comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if i < 0 || len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return false
		}
		if pid == ancestor {
			return true
		}
	}
	return false
}

// describe is one line per process: pid, parent and command line.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		ppid := "?"
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 {
				if f := strings.Fields(string(st[i+1:])); len(f) > 1 {
					ppid = f[1]
				}
			}
		}
		fmt.Fprintf(&b, "  pid %d (parent %s): %s\n", pid, ppid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return b.String()
}
