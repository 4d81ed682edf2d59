package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"
)

// ran mirrors the run tool's structured result.
type ran struct {
	ExitCode   *int   `json:"exit_code"`
	Output     string `json:"output"`
	TimedOut   bool   `json:"timed_out"`
	DurationMS int64  `json:"duration_ms"`
	OutputCut  int    `json:"output_cut"`
	Token      string `json:"token"`
}

// integrated starts bash with shell integration and a prompt of its own
// (HOME is the test's, so the machine's rc files stay out).
func (c *client) integrated() started {
	c.t.Helper()
	s := c.start(map[string]any{
		"command":           []string{"bash"},
		"shell_integration": true,
		"env":               map[string]any{"HOME": c.t.TempDir(), "PS1": "$ ", "HISTFILE": "/dev/null"},
	})
	return s
}

func wantRan(t *testing.T, r ran, code int, output string) {
	t.Helper()
	if r.TimedOut || r.ExitCode == nil || *r.ExitCode != code || r.Output != output {
		t.Fatalf("want exit %d and output %q; got %+v", code, output, r)
	}
}

func TestRunTool(t *testing.T) {
	c := connect(t)
	s := c.integrated()
	run := func(args map[string]any) ran {
		args["session"] = s.Session
		return ok[ran](c, "run", args)
	}
	wantRan(t, run(map[string]any{"command": "true"}), 0, "")
	wantRan(t, run(map[string]any{"command": "false"}), 1, "")
	wantRan(t, run(map[string]any{"command": "(exit 3)"}), 3, "")
	var want strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	wantRan(t, run(map[string]any{"command": "seq 500"}), 0, want.String())

	// max_chars keeps the end.
	r := run(map[string]any{"command": "seq 500", "max_chars": 8})
	if r.Output != "499\n500\n" || r.OutputCut != want.Len()-8 {
		t.Fatalf("max_chars 8: %+v", r)
	}

	// A timeout leaves the command running; the next run waits for it.
	r = run(map[string]any{"command": "echo begun; read line; echo got $line", "timeout_ms": 2000})
	if !r.TimedOut || r.ExitCode != nil || r.Output != "begun\n" {
		t.Fatalf("timeout: %+v", r)
	}
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "text": "it", "keys": []string{"Enter"}})
	wantRan(t, run(map[string]any{"command": "echo after"}), 0, "after\n")
	out := c.call("run", map[string]any{"session": s.Session, "command": "echo $((6*7))"})
	if txt := text(out); !strings.Contains(txt, "Exit code 0") || !strings.Contains(txt, "42") {
		t.Fatalf("run's text: %q", txt)
	}
}

func TestRunToolWithoutIntegration(t *testing.T) {
	c := connect(t)
	s := c.shell(nil)
	c.fails("run", map[string]any{"session": s.Session, "command": "echo hi"}, "shell_integration")
}
