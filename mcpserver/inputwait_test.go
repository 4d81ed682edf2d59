//go:build unix

package mcpserver_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// inputWaited mirrors the input tool's result with a wait.
type inputWaited struct {
	Bytes int     `json:"bytes"`
	Wait  *waited `json:"wait"`
}

// The python loop an agent runs, through the MCP server: type a command that
// prints after a short sleep, wait for the prompt. Before waits were tied
// to input, 9 of 20 rounds returned at once on the old prompt.
func TestInputWaitPythonLoop(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"python3", "-q"}, "size": "100x30"})
	c.until(s.Session, `>>> ?$`)
	stale := 0
	for i := 1; i <= 50; i++ {
		want := fmt.Sprint(i * 7)
		r := ok[inputWaited](c, "input", map[string]any{
			"session": s.Session, "text": fmt.Sprintf("import time; time.sleep(0.02); print(%d*7)", i),
			"keys": []string{"Enter"}, "wait_regex": `>>> ?$`, "timeout_ms": deadline.Milliseconds(),
		})
		if r.Wait == nil || !r.Wait.Met || r.Wait.AlreadyMet {
			t.Fatalf("round %d: %+v", i, r.Wait)
		}
		// The screen returned with the wait is the one the match was made
		// on or later: it must show this round's result under the prompt.
		lines := strings.Split(strings.TrimRight(r.Wait.Screen, "\n"), "\n")
		if len(lines) < 2 || lines[len(lines)-2] != want || strings.TrimSpace(lines[len(lines)-1]) != ">>>" {
			stale++
			t.Errorf("round %d returned before the result %s:\n%s", i, want, r.Wait.Screen)
		}
	}
	if stale > 0 {
		t.Errorf("%d of 50 waits returned on the old prompt", stale)
	}
}

func TestInputWaitArguments(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(nil)
	c.fails("input", map[string]any{"session": s.Session, "text": "x", "wait_regex": "a", "wait_quiet_ms": 10}, "choose one")
	c.fails("input", map[string]any{"session": s.Session, "text": "x", "wait_regex": "("}, "invalid regex")
	c.fails("input", map[string]any{"session": s.Session, "text": "x", "timeout_ms": 100}, "timeout_ms bounds a wait")
	// None of the refused calls typed anything.
	if scr := ok[screen](c, "output", map[string]any{"session": s.Session}); strings.Contains(scr.Screen, "x") {
		t.Fatalf("a refused input reached the shell:\n%s", scr.Screen)
	}
	r := ok[inputWaited](c, "input", map[string]any{"session": s.Session, "text": "printf 'q%s\\n' 1 2", "keys": []string{"Enter"}, "wait_quiet_ms": 200, "timeout_ms": deadline.Milliseconds()})
	if r.Wait == nil || !r.Wait.Met {
		t.Fatalf("wait_quiet_ms: %+v", r.Wait)
	}
	r = ok[inputWaited](c, "input", map[string]any{"session": s.Session, "keys": []string{"Enter"}, "wait_contains": "never printed", "timeout_ms": 300})
	if r.Wait == nil || !r.Wait.TimedOut || r.Wait.Met {
		t.Fatalf("timeout: %+v", r.Wait)
	}
}

// requireTool fails (not skips) when a program the test drives is missing.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is required by this test but not installed", name)
	}
}
