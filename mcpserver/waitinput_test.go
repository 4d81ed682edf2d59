//go:build unix

package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"
)

// inputDetected mirrors the input-wait fields of a wait result.
type inputDetected struct {
	Met       bool   `json:"met"`
	TimedOut  bool   `json:"timed_out"`
	Detection string `json:"detection"`
	Screen    string `json:"screen"`
}

// The input tool's wait_input and the wait tool's input through the
// server: after a command that prints in bursts with pauses the wait
// returns only at the next prompt, detected by the kernel; status says
// whether the program waits; a busy program times out.
func TestWaitInputTools(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	c := connect(t)
	prog := "import time\nn = 0\nwhile True:\n    input('ready %d> ' % n)\n    n += 1\n    for i in range(3):\n        print('burst', n, i, flush=True)\n        time.sleep(0.3)\n"
	s := c.start(map[string]any{"command": []string{"python3", "-c", prog}, "size": "80x30"})
	w := ok[inputDetected](c, "wait", map[string]any{"session": s.Session, "input": true, "timeout_ms": deadline.Milliseconds()})
	if !w.Met || w.Detection != "kernel" || !strings.Contains(w.Screen, "ready 0>") {
		t.Fatalf("wait input at the first prompt: %+v", w)
	}
	st := ok[map[string]any](c, "status", map[string]any{"session": s.Session})
	if st["waiting_for_input"] != true {
		t.Fatalf("status at a prompt: %v", st)
	}
	for n := 1; n <= 3; n++ {
		r := ok[struct {
			Wait *inputDetected `json:"wait"`
		}](c, "input", map[string]any{"session": s.Session, "text": "x", "keys": []string{"Enter"}, "wait_input": true, "timeout_ms": deadline.Milliseconds()})
		if r.Wait == nil || !r.Wait.Met || !strings.Contains(r.Wait.Screen, fmt.Sprintf("burst %d 2", n)) || !strings.Contains(r.Wait.Screen, fmt.Sprintf("ready %d>", n)) {
			t.Fatalf("round %d: input wait_input returned early: %+v", n, r.Wait)
		}
	}
	c.fails("wait", map[string]any{"session": s.Session, "input": true, "quiet_ms": 10}, "cannot be combined")
	c.fails("input", map[string]any{"session": s.Session, "text": "x", "wait_input": true, "wait_regex": "a"}, "choose one")

	busy := c.start(map[string]any{"command": []string{"sh", "-c", "echo go; while :; do :; done"}})
	c.until(busy.Session, "go")
	w = ok[inputDetected](c, "wait", map[string]any{"session": busy.Session, "input": true, "timeout_ms": 500})
	if w.Met || !w.TimedOut {
		t.Fatalf("wait input on a CPU loop: %+v", w)
	}
	if st := ok[map[string]any](c, "status", map[string]any{"session": busy.Session}); st["waiting_for_input"] != false {
		t.Fatalf("status of a CPU loop: %v", st)
	}
}
