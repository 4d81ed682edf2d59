//go:build linux

package watchdog

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// The test binary is its own watchdog, as the sidecar's binary is.
func TestMain(m *testing.M) {
	if IsWatchdog() {
		os.Exit(Run(os.Stdin))
	}
	os.Exit(m.Run())
}

// logLines collects what the watchdog logs, for a test to wait on.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logLines) waitFor(t *testing.T, part string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l.mu.Lock()
		all := strings.Join(l.lines, "\n")
		l.mu.Unlock()
		if strings.Contains(all, part) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in 20 s; logged:\n%s", part, all)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noneWith fails if a line logged so far holds part.
func (l *logLines) noneWith(t *testing.T, part string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, part) {
			t.Errorf("logged %q", line)
		}
	}
}

func startSleeper(t *testing.T) *ptyhost.Process {
	t.Helper()
	p, err := ptyhost.Start(ptyhost.Config{Cmd: "/bin/sleep", Args: []string{"1000"}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.SignalGroup(syscall.SIGKILL)
		p.WaitExit()
	})
	return p
}

// exits reports whether p's child exits within d (false: still running).
func exits(p *ptyhost.Process, d time.Duration) bool {
	done := make(chan struct{})
	go func() { p.WaitExit(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// A watchdog killed under us is replaced (once a second at most) and the
// new one is told every announced terminal; Close then ends it, Exited
// is closed once it was reaped, and on its way out it kills what is
// still announced (a terminal Forgotten is left alone).
func TestRestartedThenClosed(t *testing.T) {
	var log logLines
	wd, err := Start(log.logf)
	if err != nil {
		t.Fatal(err)
	}
	announced, forgotten := startSleeper(t), startSleeper(t)
	wd.Watch(announced)
	wd.Watch(forgotten)
	wd.Forget(forgotten)

	first := wd.Pid()
	firstExited := wd.Exited()
	if first <= 0 {
		t.Fatalf("Pid %d", first)
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, "watching 1 terminal")
	log.noneWith(t, "watching 1 terminals")
	select {
	case <-firstExited:
	default:
		t.Fatal("the killed watchdog's Exited is open after its replacement started")
	}
	second := wd.Pid()
	if second <= 0 || second == first {
		t.Fatalf("Pid after the restart %d (first %d)", second, first)
	}

	exited := wd.Exited()
	if err := wd.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("Exited not closed 20 s after Close")
	}
	if err := syscall.Kill(second, 0); err != syscall.ESRCH {
		t.Fatalf("the watchdog (pid %d) after Exited: kill 0 gives %v, want ESRCH", second, err)
	}
	if !exits(announced, 20*time.Second) {
		t.Fatal("the announced terminal outlived the watchdog's orderly end")
	}
	if exits(forgotten, 200*time.Millisecond) {
		t.Fatal("the forgotten terminal was killed")
	}
}

func TestTerminalsCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 terminals", 1: "1 terminal", 2: "2 terminals", 16: "16 terminals"} {
		if got := terminals(n); got != want {
			t.Errorf("terminals(%d) = %q, want %q", n, got, want)
		}
	}
}
