//go:build unix

package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/session/wire"
)

// bin is the ptyplex binary under test, built once by TestMain (with -race
// when the tests run with it).
var (
	bin     string
	raceDir string // GORACE log_path directory for the daemons' reports
)

// deadline bounds every condition the tests wait for; nothing sleeps.
const deadline = 15 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(reaperEnv) == "1" {
		os.Exit(runReaper(os.Args[1:]))
	}
	finish := testproc.Start()
	var err error
	bin, err = hosttest.Binary("./cmd/ptyplex")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The server and its daemons have no terminal to print race reports
	// on; collect them in files and fail the run if any appear.
	raceDir, err = os.MkdirTemp("", "ptyplex-mcp-race-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testproc.SetGorace(filepath.Join(raceDir, "report"))
	code := m.Run()
	reports, _ := filepath.Glob(filepath.Join(raceDir, "report*"))
	for _, r := range reports {
		b, _ := os.ReadFile(r)
		fmt.Fprintf(os.Stderr, "race report from a ptyplex process (%s):\n%s\n", r, b)
		code = 1
	}
	code = finish(code)
	os.RemoveAll(raceDir)
	hosttest.Cleanup()
	os.Exit(code)
}

// client is an MCP client connected over stdio to a `ptyplex mcp` process.
type client struct {
	t    *testing.T
	cs   *mcp.ClientSession
	cmd  *exec.Cmd
	env  []string // the server's environment, with its own session registry
	done bool
}

// connect starts `ptyplex mcp` and connects the SDK's client to it. The
// cleanup disconnects (which stops the server's non-persistent sessions).
func connect(t *testing.T) *client {
	t.Helper()
	return connectCmd(t, exec.Command(bin, "mcp"))
}

// connectCmd is connect with the server's command line of the caller's
// choosing.
func connectCmd(t *testing.T, cmd *exec.Cmd) *client {
	t.Helper()
	cmd.Stderr = os.Stderr
	// A session registry of its own: list shows this client's sessions
	// only, whatever else runs on the machine.
	runtimeDir := t.TempDir()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, wire.RuntimeDirEnv+"="+runtimeDir)
	c := mcp.NewClient(&mcp.Implementation{Name: "ptyplex-test", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to ptyplex mcp: %v", err)
	}
	cl := &client{t: t, cs: cs, cmd: cmd, env: cmd.Env}
	t.Cleanup(cl.close)
	return cl
}

// close disconnects, as a client that quits does: stdin is closed and the
// server cleans up and exits.
func (c *client) close() {
	if c.done {
		return
	}
	c.done = true
	if err := c.cs.Close(); err != nil {
		c.t.Logf("closing MCP session: %v", err)
	}
}

// call invokes a tool and returns its result; protocol errors fail the test.
func (c *client) call(name string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*deadline)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s %v: protocol error: %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result.
func ok[T any](c *client, name string, args map[string]any) T {
	c.t.Helper()
	res := c.call(name, args)
	if res.IsError {
		c.t.Fatalf("%s %v: tool error: %s", name, args, text(res))
	}
	var out T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		c.t.Fatalf("%s: structured content: %v", name, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	return out
}

// fails calls a tool that must fail with a tool error (not a protocol
// error) whose text contains want.
func (c *client) fails(name string, args map[string]any, want string) {
	c.t.Helper()
	res := c.call(name, args)
	if !res.IsError {
		c.t.Fatalf("%s %v: succeeded, want a tool error containing %q; got %s", name, args, want, text(res))
	}
	if !strings.Contains(text(res), want) {
		c.t.Fatalf("%s %v: error %q does not contain %q", name, args, text(res), want)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// started mirrors the start tool's structured result.
type started struct {
	Session    string   `json:"session"`
	Socket     string   `json:"socket"`
	PID        int      `json:"pid"`
	Command    []string `json:"command"`
	Persistent bool     `json:"persistent"`
}

// start starts a session through the tool and makes sure, in cleanup, that
// its daemon is gone whatever the test did.
func (c *client) start(args map[string]any) started {
	c.t.Helper()
	s := ok[started](c, "start", args)
	if s.Session == "" || s.Socket == "" || s.PID <= 0 {
		c.t.Fatalf("start: incomplete result %+v", s)
	}
	c.t.Cleanup(func() { reap(c.t, s.Socket, s.PID) })
	return s
}

// reap stops a daemon the test may have left behind (STOP, then SIGKILL).
func reap(t *testing.T, socket string, pid int) {
	if !hosttest.Alive(pid) {
		return
	}
	wire.Call(socket, map[string]any{"type": "STOP"})
	if !hosttest.WaitGone(pid, deadline) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("daemon %d (%s) survived STOP", pid, socket)
	}
}

// shell starts bash with a known prompt and waits for it.
func (c *client) shell(extra map[string]any) started {
	c.t.Helper()
	args := map[string]any{
		"command": []string{"bash", "--norc", "--noprofile"},
		"env":     map[string]any{"PS1": "$ ", "HISTFILE": "/dev/null"},
	}
	for k, v := range extra {
		args[k] = v
	}
	s := c.start(args)
	w := ok[waited](c, "wait", map[string]any{"session": s.Session, "regex": `\$ ?$`, "timeout_ms": deadline.Milliseconds()})
	if !w.Met {
		c.t.Fatalf("no shell prompt: %+v", w)
	}
	return s
}

// waited mirrors the wait tool's structured result.
type waited struct {
	Condition  string `json:"condition"`
	Met        bool   `json:"met"`
	AlreadyMet bool   `json:"already_met"`
	TimedOut   bool   `json:"timed_out"`
	Exited     bool   `json:"exited"`
	ExitCode   *int   `json:"exit_code"`
	Match      string `json:"match"`
	Screen     string `json:"screen"`
}

// screen mirrors the output tool's structured result.
type screen struct {
	Screen string `json:"screen"`
	Cursor struct {
		Row, Col int
	} `json:"cursor"`
	Size struct {
		Cols, Rows int
	} `json:"size"`
	From                int `json:"from"`
	To                  int `json:"to"`
	ScrollbackAvailable int `json:"scrollback_available"`
}

// until waits for a regex on the screen and fails the test on timeout.
func (c *client) until(sess, re string) waited {
	c.t.Helper()
	w := ok[waited](c, "wait", map[string]any{"session": sess, "regex": re, "timeout_ms": deadline.Milliseconds()})
	if !w.Met {
		c.t.Fatalf("waiting for /%s/: %+v", re, w)
	}
	return w
}

// typeLine types text and Enter.
func (c *client) typeLine(sess, line string) {
	c.t.Helper()
	ok[map[string]any](c, "input", map[string]any{"session": sess, "text": line, "keys": []string{"Enter"}})
}
