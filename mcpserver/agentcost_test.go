//go:build unix

package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scripted agent task the README's figure comes from (make
// agent-measure prints it): start bash, run three commands and read their
// results with their exit codes, edit two lines of a file in vim and save
// it, then a Python REPL session of five inputs. It is done three times,
// through the real server and binaries, and checked step by step in each
// (the exit codes, the file's content, the REPL's answers):
//   - three calls: as interminai's skill text teaches an agent to drive a
//     terminal: input, wait quiet_ms, output (the whole screen); an exit
//     code costs an `echo $?` more;
//   - one call: the best use of the tools as they were before run,
//     wait_input and since: input with wait_regex returns the screen, so
//     a step is one call, and the exit code rides along (`; echo "exit $?"`);
//   - after: run, input with wait_input, and since reads.
// The one-call flow and the after flow take the same steps (vim's two
// edits and :wq in one input), so what differs is only the tools.

// meter counts what an agent pays: tool calls, and the characters of the
// text the tools return (what lands in the agent's context).
type meter struct {
	c     *client
	calls int
	chars int
	// The three-call agent's extra rounds when a quiet wait ended before
	// the program answered: counted apart, since they depend on the
	// machine's speed (the figures leave them out, in that flow's favour).
	retrying               bool
	retryCalls, retryChars int
}

func (m *meter) call(name string, args map[string]any) *mcp.CallToolResult {
	m.c.t.Helper()
	res := m.c.call(name, args)
	if res.IsError {
		m.c.t.Fatalf("%s %v: %s", name, args, text(res))
	}
	if m.retrying {
		m.retryCalls++
		m.retryChars += cost(text(res))
	} else {
		m.calls++
		m.chars += cost(text(res))
	}
	if os.Getenv("AGENT_TRACE") != "" {
		m.c.t.Logf("%s %v -> %d: %q", name, args, len(text(res)), text(res))
	}
	return res
}

// Numbers that vary from run to run (elapsed times, a pid, a socket's
// random directory, a token's sequence number, which a retried read
// advances) are counted at one fixed width in every flow, and a
// wait that found its condition already met at once as one that waited,
// so the figures are counts of the same text, not of the machine's speed.
var variable = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d+ ms\b`), "000 ms"},
	{regexp.MustCompile(`PID: \d+`), "PID: 00000"},
	{regexp.MustCompile(`interminai-\d+`), "interminai-0000000000"},
	{regexp.MustCompile(`\b([0-9a-f]{8})\.\d+\b`), "$1.00"},
	{regexp.MustCompile(`Condition already met: `), "Condition met after 000 ms: "},
}

func cost(s string) int {
	for _, v := range variable {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return len(s)
}

// structured decodes res's structured result into out.
func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// The three commands, what each must print and its exit status.
var agentCommands = []struct {
	cmd, out string
	code     int
}{
	{"printf 'alpha\\nbeta\\ngamma\\n' > notes.txt && ls -la", "notes.txt", 0},
	{"grep -n a notes.txt", "1:alpha\n2:beta\n3:gamma", 0},
	{"grep -c delta notes.txt", "0", 1},
}

// The REPL's five inputs and what each must show.
var replInputs = []struct{ in, want string }{
	{"x = 6 * 7", ""},
	{"print(x)", "42"},
	{"sorted([3, 1, 2])", "[1, 2, 3]"},
	{"len('ptyplex')", "7"},
	{"x + 1", "43"},
}

const vimCmd = "vim -u NONE -N -n notes.txt"

func agentThreeCalls(t *testing.T, dir string) meter {
	c := connect(t)
	m := meter{c: c}
	var s started
	structured(t, m.call("start", map[string]any{
		"command": []string{"bash", "--norc", "--noprofile"}, "cwd": dir,
		"env": map[string]any{"PS1": "$ ", "HISTFILE": "/dev/null"},
	}), &s)
	c.t.Cleanup(func() { reap(c.t, s.Socket, s.PID) })
	// step types text and keys, waits for quiet and reads the screen. A
	// quiet period is a guess: on a busy machine the program may not have
	// answered yet, and then the agent waits and reads again (ready says
	// what it is looking for; nil reads once). Those calls are counted
	// apart (meter.retrying).
	step := func(text string, ready func(string) bool, keys ...string) string {
		args := map[string]any{"session": s.Session, "text": text, "literal": true}
		if len(keys) > 0 {
			args["keys"] = keys
		}
		m.call("input", args)
		// Every round is counted as a retry until one finds the screen
		// ready: that last round is the step's (its screen is complete,
		// so its size does not depend on when the quiet wait ended).
		m.retrying = true
		defer func() { m.retrying = false }()
		for try := 0; ; try++ {
			c0, n0 := m.retryCalls, m.retryChars
			m.call("wait", map[string]any{"session": s.Session, "quiet_ms": 300, "include_screen": false})
			var scr screen
			structured(t, m.call("output", map[string]any{"session": s.Session}), &scr)
			if ready == nil || ready(scr.Screen) {
				m.calls += m.retryCalls - c0
				m.chars += m.retryChars - n0
				m.retryCalls, m.retryChars = c0, n0
				return scr.Screen
			}
			if try == 20 {
				t.Fatalf("before: %q: the screen never got ready:\n%s", text, scr.Screen)
			}
		}
	}
	shellBack := func(scr string) bool { return regexp.MustCompile(`\n\$ ?\n*$`).MatchString(scr) }
	pythonBack := func(scr string) bool { return regexp.MustCompile(`\n>>> ?\n*$`).MatchString(scr) }
	m.call("wait", map[string]any{"session": s.Session, "quiet_ms": 300, "include_screen": false})
	for _, ac := range agentCommands {
		scr := step(ac.cmd, shellBack, "Enter")
		if !strings.Contains(scr, ac.out) {
			t.Fatalf("before: %q: screen lacks %q:\n%s", ac.cmd, ac.out, scr)
		}
		scr = step("echo $?", shellBack, "Enter")
		if got := lastAnswer(scr); got != itoa(ac.code) {
			t.Fatalf("before: %q: exit code read %q, want %d:\n%s", ac.cmd, got, ac.code, scr)
		}
	}
	step(vimCmd, func(scr string) bool { return strings.Contains(scr, "notes.txt\" 3L") }, "Enter")
	step("ggccALPHA", nil, "Escape")
	step("3GccGAMMA", nil, "Escape")
	step(":wq", shellBack, "Enter")
	scr := step("cat notes.txt", shellBack, "Enter")
	if !strings.Contains(scr, "ALPHA\nbeta\nGAMMA\n") {
		t.Fatalf("before: cat after vim:\n%s", scr)
	}
	scr = step("echo $?", shellBack, "Enter")
	if lastAnswer(scr) != "0" {
		t.Fatalf("before: cat's exit code:\n%s", scr)
	}
	step("python3 -q", pythonBack, "Enter")
	for _, r := range replInputs {
		scr := step(r.in, pythonBack, "Enter")
		if r.want != "" && !strings.Contains(scr, "\n"+r.want+"\n") {
			t.Fatalf("before: python %q: screen lacks %q:\n%s", r.in, r.want, scr)
		}
	}
	m.call("stop", map[string]any{"session": s.Session})
	return m
}

// agentOneCall is the best an agent could do with the tools as they were
// before: every step is one input whose wait_regex waits for the prompt
// and whose reply carries the screen.
func agentOneCall(t *testing.T, dir string) meter {
	c := connect(t)
	m := meter{c: c}
	var s started
	structured(t, m.call("start", map[string]any{
		"command": []string{"bash", "--norc", "--noprofile"}, "cwd": dir,
		"env": map[string]any{"PS1": "$ ", "HISTFILE": "/dev/null"},
	}), &s)
	c.t.Cleanup(func() { reap(c.t, s.Socket, s.PID) })
	const shell, python = `\$ ?$`, `>>> ?$`
	step := func(text, prompt string, keys ...string) string {
		var r struct {
			Wait struct {
				Met    bool   `json:"met"`
				Screen string `json:"screen"`
			} `json:"wait"`
		}
		// Literal, but for vim's keys, which need \e for Escape.
		args := map[string]any{"session": s.Session, "text": text, "keys": keys, "wait_regex": prompt,
			"literal": !strings.Contains(text, `\e`)}
		structured(t, m.call("input", args), &r)
		if !r.Wait.Met {
			t.Fatalf("one call: %q: the prompt did not come back:\n%s", text, r.Wait.Screen)
		}
		return r.Wait.Screen
	}
	// Typed before the first prompt, a line would be echoed by the
	// terminal and then the prompt drawn after it, which the regex would
	// take for the command's end.
	m.call("wait", map[string]any{"session": s.Session, "regex": shell, "include_screen": false})
	for _, ac := range agentCommands {
		scr := step(ac.cmd+`; echo "exit $?"`, shell, "Enter")
		if !strings.Contains(scr, ac.out) || !strings.Contains(scr, "\nexit "+itoa(ac.code)+"\n$") {
			t.Fatalf("one call: %q: want %q and exit %d:\n%s", ac.cmd, ac.out, ac.code, scr)
		}
	}
	// vim draws its message line before the text: wait for the whole screen.
	if scr := step(vimCmd, `\Aalpha\nbeta\ngamma\n(~\n){20}"notes.txt" 3L`, "Enter"); !strings.Contains(scr, "alpha\nbeta\ngamma\n~") {
		t.Fatalf("one call: vim's screen:\n%s", scr)
	}
	if scr := step(`ggccALPHA\e3GccGAMMA\e:wq`, shell, "Enter"); !strings.Contains(scr, "$ "+vimCmd+"\n$") {
		t.Fatalf("one call: vim did not end:\n%s", scr)
	}
	if scr := step(`cat notes.txt; echo "exit $?"`, shell, "Enter"); !strings.Contains(scr, "\nALPHA\nbeta\nGAMMA\nexit 0\n$") {
		t.Fatalf("one call: cat after vim:\n%s", scr)
	}
	if scr := step("python3 -q", python, "Enter"); !strings.Contains(scr, "$ python3 -q\n>>>") {
		t.Fatalf("one call: python's prompt:\n%s", scr)
	}
	for _, r := range replInputs {
		want := ">>> " + r.in + "\n" + r.want + "\n>>>"
		if r.want == "" {
			want = ">>> " + r.in + "\n>>>"
		}
		if scr := step(r.in, python, "Enter"); !strings.Contains(scr, want) {
			t.Fatalf("one call: python %q: screen lacks %q:\n%s", r.in, want, scr)
		}
	}
	m.call("stop", map[string]any{"session": s.Session})
	return m
}

func agentAfter(t *testing.T, dir string) meter {
	c := connect(t)
	m := meter{c: c}
	res := m.call("start", map[string]any{
		"command": []string{"bash"}, "shell_integration": true, "cwd": dir,
		"env": map[string]any{"HOME": dir, "PS1": "$ ", "HISTFILE": "/dev/null"},
	})
	var s started
	structured(t, res, &s)
	c.t.Cleanup(func() { reap(c.t, s.Socket, s.PID) })
	run := func(cmd string) ran {
		var r ran
		structured(t, m.call("run", map[string]any{"session": s.Session, "command": cmd}), &r)
		if r.Token == "" {
			t.Fatalf("after: run %q: no token: %+v", cmd, r)
		}
		return r
	}
	for _, ac := range agentCommands {
		r := run(ac.cmd)
		if r.ExitCode == nil || *r.ExitCode != ac.code || !strings.Contains(r.Output, ac.out) {
			t.Fatalf("after: %q: %+v", ac.cmd, r)
		}
	}
	// type sends text and keys and waits until the program reads its
	// terminal again; with a token it returns what changed since then.
	type reply struct {
		text      string
		detection string
		changes   string
		token     string
	}
	type_ := func(typed, since string, keys ...string) reply {
		args := map[string]any{"session": s.Session, "text": typed, "keys": keys, "wait_input": true, "include_screen": false}
		if since != "" {
			args["since"] = since
		}
		res := m.call("input", args)
		var o struct {
			Wait struct {
				Met       bool   `json:"met"`
				Detection string `json:"detection"`
			} `json:"wait"`
			Changes struct {
				Token string `json:"token"`
			} `json:"changes"`
		}
		structured(t, res, &o)
		if !o.Wait.Met || !strings.HasPrefix(text(res), "After ") || !strings.Contains(text(res), "the program waits for input.") {
			t.Fatalf("after: %q: %s", typed, text(res))
		}
		return reply{text: text(res), detection: o.Wait.Detection, token: o.Changes.Token}
	}
	// vim: the file's content is known from grep; opening it needs only
	// to know that vim is ready, then the two edits and :wq go in one
	// input, and cat checks the result.
	if r := type_(vimCmd, "", "Enter"); r.detection != "kernel" {
		t.Fatalf("after: vim: %+v", r)
	}
	if r := type_(`ggccALPHA\e3GccGAMMA\e:wq`, "", "Enter"); r.detection != "kernel" {
		t.Fatalf("after: vim's edits and :wq: %+v", r)
	}
	cat := run("cat notes.txt")
	if cat.ExitCode == nil || *cat.ExitCode != 0 || cat.Output != "ALPHA\nbeta\nGAMMA\n" {
		t.Fatalf("after: cat: %+v", cat)
	}
	// python starts where cat left the screen: its reply is the command
	// line and the prompt, not the whole screen again. Typed before bash
	// printed its prompt after cat (run returns at cat's exit), the line
	// is echoed by the terminal first and drawn again after the prompt:
	// one more changed row, still not the screen.
	r := type_("python3 -q", cat.Token, "Enter")
	if !regexp.MustCompile(`@@ rows (\d+)\.\.\d+ changed.*\n(\d+: python3 -q\n)?\d+: .*python3 -q\n\d+: >>>\n$`).MatchString(r.text) {
		t.Fatalf("after: python's prompt:\n%s", r.text)
	}
	for _, in := range replInputs {
		r = type_(in.in, r.token, "Enter")
		want := regexp.MustCompile(`\n\d+: >>> ` + regexp.QuoteMeta(in.in) + `\n(\d+: ` + regexp.QuoteMeta(in.want) + `\n)?\d+: >>>\n$`)
		if !want.MatchString(r.text) || (in.want != "" && !strings.Contains(r.text, ": "+in.want+"\n")) {
			t.Fatalf("after: python %q: want %q in:\n%s", in.in, in.want, r.text)
		}
	}
	m.call("stop", map[string]any{"session": s.Session})
	return m
}

// lastAnswer is the last line of a shell screen before its final prompt.
func lastAnswer(scr string) string {
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if regexp.MustCompile(`^\$ ?$`).MatchString(lines[i]) {
			return lines[i-1]
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestAgentTaskCost(t *testing.T) {
	t.Parallel()
	requireTool(t, "vim")
	requireTool(t, "python3")
	three := agentThreeCalls(t, t.TempDir())
	dir := t.TempDir()
	one := agentOneCall(t, dir)
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "ALPHA\nbeta\nGAMMA\n" {
		t.Fatalf("one call: the file holds %q", got)
	}
	dir = t.TempDir()
	after := agentAfter(t, dir)
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "ALPHA\nbeta\nGAMMA\n" {
		t.Fatalf("after: the file holds %q", got)
	}
	ratio := func(a, b int) float64 { return float64(a) / float64(b) }
	t.Logf("agent task: the three-call agent's quiet waits ended early %d times this run (%d calls, %d characters more, not in its figures)",
		three.retryCalls/2, three.retryCalls, three.retryChars)
	t.Logf("agent task: after %d calls, %d characters; "+
		"before = three-call agent as interminai's skill text teaches: %d calls, %d characters (%.2fx fewer calls, %.2fx fewer characters); "+
		"before = the best one-call use of the old tools: %d calls, %d characters (%.2fx fewer calls, %.2fx fewer characters)",
		after.calls, after.chars,
		three.calls, three.chars, ratio(three.calls, after.calls), ratio(three.chars, after.chars),
		one.calls, one.chars, ratio(one.calls, after.calls), ratio(one.chars, after.chars))
	// The aim, against the three-call agent: at least 2x fewer
	// calls and 3x fewer characters.
	if three.calls < 2*after.calls || three.chars < 3*after.chars {
		t.Errorf("against the three-call agent: want at least 2x fewer calls and 3x fewer characters; before %d/%d, after %d/%d",
			three.calls, three.chars, after.calls, after.chars)
	}
	// Against the best one-call use of the old tools, what holds with a
	// margin: no more calls (the steps are the same; run folds the exit
	// code in, as "; echo" did), and at least 3x fewer characters (4.0x
	// measured). The counts do not depend on timing (see cost), so this
	// does not flake on a loaded machine.
	if after.calls > one.calls || one.chars < 3*after.chars {
		t.Errorf("against the one-call agent: want no more calls and at least 3x fewer characters; before %d/%d, after %d/%d",
			one.calls, one.chars, after.calls, after.chars)
	}
}
