//go:build unix

package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/session/wire"
)

func TestToolsAreListedWithSchemas(t *testing.T) {
	t.Parallel()
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 {
			t.Errorf("tool %s: description too thin for an agent: %q", tool.Name, tool.Description)
		}
		// No output schema: tools/list goes into every agent's context
		// (TestToolsListSize); the results are described in their text.
		if tool.InputSchema == nil {
			t.Errorf("tool %s: missing input schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"debug", "input", "kill", "list", "output", "resize", "run", "screenshot", "start", "status", "stop", "wait"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

// TestStartSchemaSaysCommandIsNeeded: the start tool's schema says what
// the tool takes, an array of at least one item, so null and [] are
// refused by the schema an agent reads; it allowed null and []
// (["null","array"]), which the tool then refused.
func TestStartSchemaSaysCommandIsNeeded(t *testing.T) {
	t.Parallel()
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "start" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		cmd := schema.Properties["command"]
		if cmd["type"] != "array" || cmd["minItems"] != 1.0 || !slices.Contains(schema.Required, "command") {
			t.Errorf("start's command schema: %v, required %v", cmd, schema.Required)
		}
	}
	c.fails("start", map[string]any{"command": nil}, "command")
	c.fails("start", map[string]any{"command": []string{}}, "command")
	c.fails("start", map[string]any{"command": []string{""}}, "the command argument is required")
}

func TestShellSession(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(nil)

	// Text and a named key in one input; wait returns the screen.
	c.typeLine(s.Session, "echo hello-$((6*7))")
	w := c.until(s.Session, `(?m)^hello-42$`)
	if w.Match != "hello-42" || !strings.Contains(w.Screen, "$ echo hello-$((6*7))") {
		t.Fatalf("wait result %+v", w)
	}

	// Escapes in text: \r is Enter, \x41 is 'A'.
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "text": `echo esc-\x41\r`})
	c.until(s.Session, `(?m)^esc-A\n\$ ?$`)

	// Plain by default, ANSI on request.
	// (\\n: the tool's text unescapes \n itself, as `input --text` does.)
	c.typeLine(s.Session, `printf '\033[31mred-%s\033[0m\\n' text`)
	c.until(s.Session, `(?m)^red-text\n\$ ?$`)
	plain := ok[screen](c, "output", map[string]any{"session": s.Session})
	if strings.Contains(plain.Screen, "\x1b[") || !strings.Contains(plain.Screen, "red-text") {
		t.Fatalf("plain output: %q", plain.Screen)
	}
	if plain.Size.Cols != 80 || plain.Size.Rows != 24 || plain.Cursor.Row < 1 || plain.Cursor.Col != 3 {
		t.Fatalf("plain output geometry: %+v", plain)
	}
	ansi := ok[screen](c, "output", map[string]any{"session": s.Session, "format": "ansi"})
	if !strings.Contains(ansi.Screen, "red-text") || !strings.Contains(ansi.Screen, "\x1b[") {
		t.Fatalf("ansi output has no colour: %q", ansi.Screen)
	}
	one := ok[screen](c, "output", map[string]any{"session": s.Session, "from": 1, "to": 1, "number": true})
	if one.Screen != " 1\t$ echo hello-$((6*7))\n" || one.From != 1 || one.To != 1 {
		t.Fatalf("line 1 numbered: %q (%d..%d)", one.Screen, one.From, one.To)
	}

	// Resize reaches the program.
	r := ok[map[string]any](c, "resize", map[string]any{"session": s.Session, "size": "100x30"})
	if size := r["size"].(map[string]any); size["cols"] != 100.0 || size["rows"] != 30.0 {
		t.Fatalf("resize result %v", r)
	}
	c.typeLine(s.Session, "stty size")
	c.until(s.Session, `(?m)^30 100\n\$ ?$`)

	// Ctrl-C interrupts the foreground command; the shell survives.
	// (The command prints before it sleeps, so Ctrl-C cannot overtake it.)
	c.typeLine(s.Session, `sh -c 'echo sleeping; exec sleep 600'`)
	c.until(s.Session, `(?m)^sleeping$`)
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "keys": []string{"Ctrl-C"}})
	c.until(s.Session, `sleeping\n\^C\n\$ ?$`)

	// History through the Up key.
	c.typeLine(s.Session, "echo again")
	c.until(s.Session, `(?m)^again\n\$ ?$`)
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "keys": []string{"Up", "Enter"}})
	c.until(s.Session, `(?m)^again\n\$ echo again\nagain\n\$ ?$`)

	st := ok[map[string]any](c, "status", map[string]any{"session": s.Session})
	if st["running"] != true || st["started_here"] != true {
		t.Fatalf("status %v", st)
	}
	d := ok[map[string]any](c, "debug", map[string]any{"session": s.Session})
	if tm := d["termios"].(map[string]any); tm["mode"] != "cooked" && tm["mode"] != "raw" {
		t.Fatalf("debug %v", d)
	}

	// A human can read the same session with the CLI, by socket.
	out, err := exec.Command(bin, "output", "--no-color", "--socket", s.Socket).Output()
	if err != nil || !strings.Contains(string(out), "hello-42") {
		t.Fatalf("ptyplex output --socket: %v\n%s", err, out)
	}
	// ... and the socket path works as a handle too.
	ok[screen](c, "output", map[string]any{"session": s.Socket})

	// exit ends the program; wait reports the code; the session stays
	// readable until stop.
	c.typeLine(s.Session, "exit 3")
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": deadline.Milliseconds()})
	if !w.Exited || w.ExitCode == nil || *w.ExitCode != 3 {
		t.Fatalf("wait exit: %+v", w)
	}
	l := ok[struct {
		Sessions []struct {
			Session  string `json:"session"`
			State    string `json:"state"`
			ExitCode *int   `json:"exit_code"`
		} `json:"sessions"`
	}](c, "list", nil)
	if len(l.Sessions) != 1 || l.Sessions[0].State != "exited" || *l.Sessions[0].ExitCode != 3 {
		t.Fatalf("list %+v", l)
	}
	ok[map[string]any](c, "stop", map[string]any{"session": s.Session})
	if !hosttest.WaitGone(s.PID, deadline) {
		t.Fatalf("daemon %d still running after stop", s.PID)
	}
	c.fails("output", map[string]any{"session": s.Session}, "unknown session")
}

func TestPythonREPL(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is required by this test")
	}
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"python3", "-q"}, "size": "100x30"})
	c.until(s.Session, `>>> ?$`)
	c.typeLine(s.Session, "6*7")
	c.until(s.Session, `(?m)^42\n>>> ?$`)
	c.typeLine(s.Session, `print("py" + "thon")`)
	c.until(s.Session, `(?m)^python\n>>> ?$`)

	// A multi-line block: the continuation prompt, then a blank line.
	c.typeLine(s.Session, "for i in range(3): print('row', i)")
	c.until(s.Session, `\.\.\. ?$`)
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "keys": []string{"Enter"}})
	c.until(s.Session, `row 2\n>>> ?$`)

	// Ctrl-C raises KeyboardInterrupt in the REPL and it carries on.
	c.typeLine(s.Session, "import time; print('sleeping'); time.sleep(600)")
	c.until(s.Session, `(?m)^sleeping$`)
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "keys": []string{"Ctrl-C"}})
	c.until(s.Session, `KeyboardInterrupt\s*\n>>> ?$`)

	// A wait that cannot be met times out as a normal result.
	w := ok[waited](c, "wait", map[string]any{"session": s.Session, "contains": "never printed", "timeout_ms": 300})
	if !w.TimedOut || w.Met || !strings.Contains(w.Screen, ">>>") {
		t.Fatalf("timed-out wait: %+v", w)
	}

	// The exit code reaches wait.
	c.typeLine(s.Session, "import sys; sys.exit(7)")
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": deadline.Milliseconds()})
	if !w.Exited || w.ExitCode == nil || *w.ExitCode != 7 {
		t.Fatalf("python exit: code %s, %+v", codeOf(w.ExitCode), w)
	}
	// Input to an exited program is a tool error.
	c.fails("input", map[string]any{"session": s.Session, "text": "1\r"}, "not running")
}

func TestWaitModes(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(nil)

	// Already met: the prompt is on the screen.
	w := ok[waited](c, "wait", map[string]any{"session": s.Session, "contains": "$"})
	if !w.Met || !w.AlreadyMet {
		t.Fatalf("already met: %+v", w)
	}
	// not_contains on a line, met when the line is cleared.
	c.typeLine(s.Session, "echo marker; clear")
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "line": 2, "not_contains": "marker", "timeout_ms": deadline.Milliseconds()})
	if !w.Met {
		t.Fatalf("not_contains: %+v", w)
	}
	c.until(s.Session, `^\$ ?$`)
	// Line change: a counter that keeps rewriting line 1.
	counter := c.start(map[string]any{"command": []string{"sh", "-c", `i=0; while :; do i=$((i+1)); printf '\033[H%d\033[K' $i; sleep 0.05; done`}})
	w = ok[waited](c, "wait", map[string]any{"session": counter.Session, "line": 1, "timeout_ms": deadline.Milliseconds()})
	if !w.Met || w.AlreadyMet {
		t.Fatalf("line change: %+v", w)
	}
	ok[map[string]any](c, "stop", map[string]any{"session": counter.Session})
	// Activity: any output.
	c.typeLine(s.Session, "echo act")
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "timeout_ms": deadline.Milliseconds()})
	if !w.Met || w.TimedOut {
		t.Fatalf("activity: %+v", w)
	}
	// Quiet after a burst of output. How soon the shell runs the command
	// is up to the scheduler, so only the verdict is checked here, and the
	// burst is awaited on its own.
	c.typeLine(s.Session, "printf 'burst %s\\n' 1 2 3")
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "quiet_ms": 200, "timeout_ms": deadline.Milliseconds()})
	if !w.Met || w.TimedOut {
		t.Fatalf("quiet: %+v", w)
	}
	c.until(s.Session, `burst 3`)
	// A program that keeps printing is never quiet: timeout, not error. The
	// quiet period is long next to the printing interval so that a loaded
	// machine does not make the loop look quiet.
	// The loop runs in a child sh: an interactive bash running the loop
	// itself can miss a ^C that lands between two of its jobs.
	c.typeLine(s.Session, "sh -c 'while :; do echo tick; sleep 0.02; done'")
	c.until(s.Session, `tick`)
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "quiet_ms": 2000, "timeout_ms": 2500})
	if !w.TimedOut || w.Met {
		t.Fatalf("quiet never reached: %+v", w)
	}
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "keys": []string{"Ctrl-C"}})
	c.until(s.Session, `\$ ?$`)
	// The program exits while a pattern is awaited.
	c.typeLine(s.Session, "exit 5")
	w = ok[waited](c, "wait", map[string]any{"session": s.Session, "contains": "never printed", "timeout_ms": deadline.Milliseconds()})
	if w.Met || !w.Exited || w.ExitCode == nil || *w.ExitCode != 5 {
		t.Fatalf("exit during pattern wait: %+v", w)
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"sleep", "600"}})
	c.fails("kill", map[string]any{"session": s.Session, "signal": "NOTASIGNAL"}, "Invalid signal")
	c.fails("kill", map[string]any{"session": s.Session, "signal": "9999"}, "Invalid signal")
	k := ok[map[string]any](c, "kill", map[string]any{"session": s.Session, "signal": "KILL"})
	if k["signal_sent"] != "SIGKILL" {
		t.Fatalf("kill result %v", k)
	}
	w := ok[waited](c, "wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": deadline.Milliseconds()})
	if !w.Exited || w.ExitCode == nil || *w.ExitCode != 128+9 {
		t.Fatalf("after SIGKILL: %+v", w)
	}
	c.fails("kill", map[string]any{"session": s.Session}, "already dead")
}

// TestKillTakesEverySignalName: kill takes any signal name the platform
// knows, with or without SIG, in any case, as the README says; it took
// interminai's seven names only (SIGCONT was refused, 18 worked).
func TestKillTakesEverySignalName(t *testing.T) {
	t.Parallel()
	c := connect(t)
	// wait is interrupted by a trapped signal, so each trap runs at once.
	s := c.start(map[string]any{"command": []string{"sh", "-c",
		`for s in CONT URG WINCH; do trap "echo got-$s" $s; done; echo ready; while :; do sleep 600 & wait $!; done`}})
	c.until(s.Session, "ready")
	for _, tc := range []struct{ signal, sent string }{
		{"SIGCONT", "SIGCONT"},
		{"urg", "SIGURG"},
		{"Winch", "SIGWINCH"},
	} {
		k := ok[map[string]any](c, "kill", map[string]any{"session": s.Session, "signal": tc.signal})
		if k["signal_sent"] != tc.sent {
			t.Errorf("kill %s: %v", tc.signal, k)
		}
		c.until(s.Session, "got-"+strings.TrimPrefix(tc.sent, "SIG"))
	}
	c.fails("kill", map[string]any{"session": s.Session, "signal": "SIGNOPE"}, "Invalid signal")
}

func TestErrorsAreToolErrors(t *testing.T) {
	t.Parallel()
	c := connect(t)
	c.fails("output", map[string]any{"session": "s99"}, `unknown session "s99"`)
	c.fails("status", map[string]any{"session": "/nonexistent/socket"}, "No such file")
	c.fails("start", map[string]any{"command": []string{}}, "command")
	c.fails("start", map[string]any{"command": []string{"true"}, "size": "huge"}, "Invalid size")
	c.fails("start", map[string]any{"command": []string{"/nonexistent/program"}}, "/nonexistent/program")
	s := c.start(map[string]any{"command": []string{"cat"}})
	c.fails("resize", map[string]any{"session": s.Session, "size": "0x0"}, "Invalid size")
	c.fails("resize", map[string]any{"session": s.Session, "size": "80"}, "Invalid size")
	c.fails("input", map[string]any{"session": s.Session, "keys": []string{"Hyper-Q"}}, "unknown key")
	c.fails("input", map[string]any{"session": s.Session}, "nothing to send")
	c.fails("input", map[string]any{"session": s.Session, "text": `\x4g`}, `invalid hex escape: \x4g`)
	c.fails("wait", map[string]any{"session": s.Session, "regex": "("}, "invalid regex")
	c.fails("wait", map[string]any{"session": s.Session, "contains": "a", "regex": "b"}, "choose one")
	c.fails("wait", map[string]any{"session": s.Session, "line": 99, "contains": "x"}, "off the screen")
	c.fails("output", map[string]any{"session": s.Session, "format": "html"}, "format")

	// A daemon that died under us: a clear message, and the server lives on.
	syscall.Kill(s.PID, syscall.SIGKILL)
	if !hosttest.WaitGone(s.PID, deadline) {
		t.Fatal("daemon survived SIGKILL")
	}
	res := c.call("output", map[string]any{"session": s.Session})
	if !res.IsError || !strings.Contains(text(res), s.Socket) {
		t.Fatalf("output of a dead daemon: %s", text(res))
	}
	l := ok[map[string]any](c, "list", nil)
	if rows := l["sessions"].([]any); len(rows) != 1 || rows[0].(map[string]any)["state"] != "stale" {
		t.Fatalf("list after daemon death: %v", l)
	}
	// stop forgets a dead session and removes its private socket directory.
	ok[map[string]any](c, "stop", map[string]any{"session": s.Session})
	if _, err := os.Stat(filepath.Dir(s.Socket)); !os.IsNotExist(err) {
		t.Errorf("socket directory of the dead daemon left behind: %v", err)
	}
	c.fails("status", map[string]any{"session": s.Session}, "unknown session")
}

// TestDisconnectStopsSessions: a client that goes away takes its
// non-persistent sessions with it; persistent ones stay for the CLI.
func TestDisconnectStopsSessions(t *testing.T) {
	t.Parallel()
	c := connect(t)
	temp := c.start(map[string]any{"command": []string{"sleep", "600"}})
	keep := c.start(map[string]any{"command": []string{"sleep", "600"}, "persistent": true})
	if !keep.Persistent {
		t.Fatalf("start persistent: %+v", keep)
	}
	c.close() // closes the server's stdin and waits for it to exit
	if ps := c.cmd.ProcessState; ps == nil || !ps.Success() {
		t.Fatalf("ptyplex mcp did not exit cleanly after disconnect: %v", ps)
	}
	if !hosttest.WaitGone(temp.PID, deadline) {
		t.Fatalf("non-persistent daemon %d still running after disconnect", temp.PID)
	}
	if _, err := os.Stat(temp.Socket); !os.IsNotExist(err) {
		t.Fatalf("socket %s left behind: %v", temp.Socket, err)
	}
	var st wire.StatusData
	if err := wire.CallData(keep.Socket, map[string]any{"type": "STATUS"}, &st); err != nil || !st.Running {
		t.Fatalf("persistent session after disconnect: %+v, %v", st, err)
	}
	// A new server can drive the persistent session by its socket.
	c2 := connect(t)
	ok[screen](c2, "output", map[string]any{"session": keep.Socket})
	ok[map[string]any](c2, "stop", map[string]any{"session": keep.Socket})
	if !hosttest.WaitGone(keep.PID, deadline) {
		t.Fatalf("persistent daemon %d survived stop", keep.PID)
	}
}

// TestSignalStopsSessions: a client that kills the server instead of
// closing stdin still gets its sessions stopped.
func TestSignalStopsSessions(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"sleep", "600"}})
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !hosttest.WaitGone(s.PID, deadline) {
		t.Fatalf("daemon %d still running after the server got SIGTERM", s.PID)
	}
}

func TestInputToolAgreesWithCLI(t *testing.T) {
	t.Parallel()
	// The same bytes reach the program whether typed through the MCP tool or
	// `ptyplex input --text`: od shows them.
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"sh", "-c", "stty raw -echo; head -c 12 | od -An -tx1; sleep 600"}})
	ok[waited](c, "wait", map[string]any{"session": s.Session, "quiet_ms": 200})
	ok[map[string]any](c, "input", map[string]any{"session": s.Session, "text": `a\tb\e\x7f`, "keys": []string{"Up", "Ctrl-A"}})
	if out, err := exec.Command(bin, "input", "--socket", s.Socket, "--text", `\z\\`).CombinedOutput(); err != nil {
		t.Fatalf("ptyplex input: %v\n%s", err, out)
	}
	c.until(s.Session, `61 09 62 1b 7f 1b 5b 41 01 5c 7a 5c`)
}

var _ = mcp.Implementation{}

func codeOf(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}

// TestDisconnectDuringStart: a client that sends start and leaves at once
// must not leave a daemon running.
func TestDisconnectDuringStart(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "s")
	cmd := exec.Command(bin, "mcp")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"start","arguments":{"command":["sleep","600"],"socket":"` + sock + `"}}}
`)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ptyplex mcp: %v\n%s", err, out)
	}
	var st wire.StatusData
	if err := wire.CallData(sock, map[string]any{"type": "STATUS"}, &st); err == nil {
		wire.Call(sock, map[string]any{"type": "STOP"})
		t.Fatalf("a session started as the client left is still running: %+v", st)
	}
}
