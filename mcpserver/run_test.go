//go:build unix

package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/session/termfilter"
)

// ran mirrors the run tool's structured result.
type ran struct {
	ExitCode   *int   `json:"exit_code"`
	Output     string `json:"output"`
	TimedOut   bool   `json:"timed_out"`
	DurationMS int64  `json:"duration_ms"`
	OutputCut  int    `json:"output_cut"`
	LinesLost  int    `json:"lines_lost"`
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
	t.Parallel()
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

// TestRunToolKeepLines: output longer than the scrollback loses its first
// lines and the text says so and how to keep them; with keep_lines the
// scrollback grows first and the whole output comes back.
func TestRunToolKeepLines(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{
		"command":           []string{"bash"},
		"shell_integration": true,
		"size":              "80x10",
		"scrollback":        50,
		"env":               map[string]any{"HOME": c.t.TempDir(), "PS1": "$ ", "HISTFILE": "/dev/null"},
	})
	args := map[string]any{"session": s.Session, "command": "seq 1 300"}
	res := c.call("run", args)
	var lost ran
	structured(t, res, &lost)
	if txt := text(res); lost.LinesLost == 0 || !strings.Contains(txt, "left the scrollback") || !strings.Contains(txt, "keep_lines") || !strings.HasSuffix(lost.Output, "\n300\n") {
		t.Fatalf("output longer than the scrollback: %+v\n%s", lost, txt)
	}
	var want strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	args["keep_lines"] = 400
	wantRan(t, ok[ran](c, "run", args), 0, want.String())
	// Lines the command erased itself (clear) are said to be erased, with
	// no advice that cannot help.
	res = c.call("run", map[string]any{"session": s.Session, "command": `seq 3; printf '\033[H\033[2J\033[3J'; echo x`})
	if txt := text(res); !strings.Contains(txt, "were erased") || strings.Contains(txt, "keep_lines") {
		t.Fatalf("a command that cleared the scrollback: %s", txt)
	}
	for _, bad := range []int{-1, 1000001} {
		args["keep_lines"] = bad
		c.fails("run", args, "invalid keep_lines")
	}
}

func TestRunToolWithoutIntegration(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(nil)
	c.fails("run", map[string]any{"session": s.Session, "command": "echo hi"}, "shell_integration")
}

// TestTextRepliesEscapeBidi: the text replies of run and output (a whole
// screen, and changes since a token) show the bidi controls a program
// printed as <U+202E> and the like, as the CLI's output does, so that a
// client showing the text to a person cannot show one text and hold
// another; the structured result keeps the exact text.
func TestTextRepliesEscapeBidi(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.integrated()
	line := "user\u202e x \u2066y\u2069 ok\U000e0069\U000e0067 a\u2028b end"
	shown := "user<U+202E> x <U+2066>y<U+2069> ok<U+E0069><U+E0067> a<U+2028>b end"
	bidi := func(got string) bool { return strings.ContainsFunc(got, termfilter.IsInvisible) }
	first := ok[changes](c, "output", map[string]any{"session": s.Session})
	res := c.call("run", map[string]any{"session": s.Session, "command": "printf '%s\\n' '" + line + "'"})
	if txt := text(res); bidi(txt) || !strings.Contains(txt, shown+"\n") {
		t.Errorf("run's text does not show the bidi controls escaped:\n%q", txt)
	}
	if r := ok[ran](c, "run", map[string]any{"session": s.Session, "command": "true"}); r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("run true: %+v", r)
	}
	for _, args := range []map[string]any{{"session": s.Session}, {"session": s.Session, "since": first.Token}} {
		if txt := text(c.call("output", args)); bidi(txt) || !strings.Contains(txt, shown) {
			t.Errorf("output %v: the text does not show the bidi controls escaped:\n%q", args, txt)
		}
	}
	if sc := ok[screen](c, "output", map[string]any{"session": s.Session}); !strings.Contains(sc.Screen, line) {
		t.Errorf("the structured screen lost the exact text:\n%q", sc.Screen)
	}
}

// The run tool with zsh started with shell integration: exit codes,
// output, state that carries over, and the token for the next read.
func TestRunToolZsh(t *testing.T) {
	t.Parallel()
	requireTool(t, "zsh")
	c := connect(t)
	home := c.t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".zshrc"), []byte("PS1='$ '\nHISTFILE=/dev/null\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := c.start(map[string]any{
		"command": []string{"zsh"}, "shell_integration": true,
		"env": map[string]any{"HOME": home, "ZDOTDIR": home},
	})
	run := func(cmd string) ran {
		return ok[ran](c, "run", map[string]any{"session": s.Session, "command": cmd})
	}
	wantRan(t, run("true"), 0, "")
	wantRan(t, run("false"), 1, "")
	wantRan(t, run("(exit 3)"), 3, "")
	wantRan(t, run("X=42; cd /"), 0, "")
	wantRan(t, run("echo $X $PWD"), 0, "42 /\n")
	wantRan(t, run("seq 3; print -r -- $ZSH_NAME"), 0, "1\n2\n3\nzsh\n")
	r := run("echo token")
	if r.Token == "" {
		t.Fatalf("run in zsh: no token: %+v", r)
	}
	// The token is the screen the command left: a read since it shows
	// nothing new but, at most, the prompt drawn after the command ended.
	o := ok[changes](c, "output", map[string]any{"session": s.Session, "since": r.Token})
	for _, l := range o.Changed {
		if strings.TrimSpace(l.Text) != "$" {
			t.Fatalf("output since run's token: only the prompt may change: %+v", o)
		}
	}
}
