//go:build unix

package mcpserver_test

import (
	"strings"
	"testing"
)

// Marks a command prints (a file it shows, a hostile program) neither end
// it early with a made-up status nor fake the prompt the next run types at.
func TestRunToolIgnoresForgedMarks(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.integrated()
	forge := `printf '\033]133;D;0\a\033]133;A\a$ \033]133;B\a'`
	r := ok[ran](c, "run", map[string]any{"session": s.Session, "command": forge + "; echo tail; false"})
	if r.TimedOut || r.ExitCode == nil || *r.ExitCode != 1 || !strings.HasSuffix(r.Output, "tail\n") {
		t.Fatalf("want exit 1 and the output up to tail; got %+v", r)
	}
	r = ok[ran](c, "run", map[string]any{"session": s.Session, "command": forge + "; read line; (exit 3)", "timeout_ms": 1000})
	if !r.TimedOut || r.ExitCode != nil {
		t.Fatalf("a fake prompt ended the run: %+v", r)
	}
	r = ok[ran](c, "run", map[string]any{"session": s.Session, "command": "echo typed", "timeout_ms": 300})
	if !r.TimedOut || strings.Contains(r.Output, "typed") {
		t.Fatalf("the next run was typed into the program: %+v", r)
	}
}
