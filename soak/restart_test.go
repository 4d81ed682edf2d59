package soak

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
)

// TestManySidecarsUnderLoad starts sidecars one after another while a busy
// loop runs on every core, as a host daemon restarting its sidecar on a
// loaded laptop would. Each one must answer two OPENs, echo input on both
// terminals, and end cleanly on stdin EOF. Any early end of its stream,
// with or without a line on stderr, fails the test with the sidecar's
// stderr and exit status.
func TestManySidecarsUnderLoad(t *testing.T) {
	startHogs(t, runtime.NumCPU())
	// 20 in make test (the busy loops slow every other test running
	// meanwhile), 50 per round of make stress, 2,000 in make soak.
	n := size(20, 2000)
	if v := os.Getenv("PTYPLEX_SIDECAR_ROUNDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("PTYPLEX_SIDECAR_ROUNDS=%q: want a positive number", v)
		}
	}
	for i := 0; i < n; i++ {
		if err := sidecarRound(t); err != nil {
			t.Fatalf("sidecar %d of %d: %v", i+1, n, err)
		}
		if (i+1)%100 == 0 {
			t.Logf("%d sidecars done", i+1)
		}
	}
}

// sidecarRound runs one sidecar through OPEN, INPUT/OUTPUT on two
// terminals, and shutdown.
func sidecarRound(t *testing.T) error {
	h := hosttest.Start(t, sidecarBin)
	fail := func(what string, err error) error {
		h.Cmd.Process.Kill()
		code, werr := h.WaitExit(hosttest.Timeout)
		s := h.Now()
		return fmt.Errorf("%s: %v (stream end: %v, exit %d %v)\nframes: %s\nstderr:\n%s",
			what, err, s.EOF, code, werr, hosttest.Describe(s), h.Stderr())
	}
	ids := []string{"a", "b"}
	for _, id := range ids {
		h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh",
			Args: []string{"-c", "read line; echo got-$line"}})
	}
	for _, id := range ids {
		if _, err := h.Until(hosttest.Timeout, func(s hosttest.Snapshot) bool {
			return s.EOF != nil || hasControl(s, proto.TypeOpened, id)
		}); err != nil || h.Now().EOF != nil {
			return fail("waiting for OPENED "+id, err)
		}
	}
	for _, id := range ids {
		h.Input(id, "x"+id+"\n")
	}
	for _, id := range ids {
		want := "got-x" + id
		if _, err := h.Until(hosttest.Timeout, func(s hosttest.Snapshot) bool {
			return s.EOF != nil || (strings.Contains(s.Output(id), want) && hasControl(s, proto.TypeExit, id))
		}); err != nil || !strings.Contains(h.Now().Output(id), want) {
			return fail("waiting for the echo and EXIT of "+id, err)
		}
	}
	h.CloseStdin()
	code, err := h.WaitExit(hosttest.Timeout)
	if err != nil || code != 0 {
		return fail("waiting for a clean exit", fmt.Errorf("exit %d: %v", code, err))
	}
	if strings.Contains(h.Stderr(), "exiting with status") {
		return fmt.Errorf("a clean end was reported on stderr:\n%s", h.Stderr())
	}
	return nil
}

func hasControl(s hosttest.Snapshot, typ proto.Type, id string) bool {
	for _, c := range s.Controls(id) {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// startHogs runs n busy loops in their own processes until the test ends.
func startHogs(t *testing.T, n int) {
	for i := 0; i < n; i++ {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		// Their own group, killed by the kernel if the test binary dies
		// before its cleanup runs (a timeout): a hog left spinning slows
		// every later run on the machine.
		testproc.TieToParent(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start CPU hog: %v", err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}
