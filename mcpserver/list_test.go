//go:build unix

package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The list tool and `ptyplex list` show the same sessions: the ones this
// server started and one a human started with the CLI.
func TestListMatchesCLI(t *testing.T) {
	t.Parallel()
	c := connect(t)
	mine := c.start(map[string]any{"command": []string{"sleep", "600"}})
	start := exec.Command(bin, "start", "--", "sleep", "601")
	start.Env = c.env
	out, err := start.Output()
	if err != nil {
		t.Fatalf("ptyplex start: %v", err)
	}
	var cliSock string
	var cliPID int
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Socket: "); ok {
			cliSock = v
		}
		if v, ok := strings.CutPrefix(line, "PID: "); ok {
			json.Unmarshal([]byte(v), &cliPID)
		}
	}
	t.Cleanup(func() { reap(t, cliSock, cliPID) })

	type row struct {
		Session     string `json:"session"`
		Socket      string `json:"socket"`
		State       string `json:"state"`
		StartedHere bool   `json:"started_here"`
	}
	l := ok[struct {
		Sessions []row `json:"sessions"`
	}](c, "list", nil)
	var tool []string
	for _, r := range l.Sessions {
		tool = append(tool, r.Socket)
		switch r.Socket {
		case mine.Socket:
			if r.Session != mine.Session || !r.StartedHere || r.State != "running" {
				t.Errorf("own session: %+v", r)
			}
		case cliSock:
			if r.Session != cliSock || r.StartedHere || r.State != "running" {
				t.Errorf("CLI session: %+v", r)
			}
		}
	}
	list := exec.Command(bin, "list", "--json")
	list.Env = c.env
	js, err := list.Output()
	if err != nil {
		t.Fatalf("ptyplex list: %v", err)
	}
	var rows []row
	if err := json.Unmarshal(js, &rows); err != nil {
		t.Fatal(err)
	}
	var cli []string
	for _, r := range rows {
		cli = append(cli, r.Socket)
	}
	sort.Strings(tool)
	sort.Strings(cli)
	if strings.Join(tool, " ") != strings.Join(cli, " ") || len(cli) != 2 {
		t.Errorf("list tool shows %v, ptyplex list shows %v", tool, cli)
	}
}

// Sessions the server starts get its --idle-exit (default 10m), so a
// finished one does not linger for ever.
func TestStartedSessionsIdleExit(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"sleep", "600"}})
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID))
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Split(string(cmdline), "\x00"); !slices.Contains(args, "--idle-exit") || !slices.Contains(args, "10m0s") {
		t.Errorf("daemon started without --idle-exit 10m: %q", args)
	}
}

// The list and start tools write a session's command as ptyplex list
// does, quoted as a shell reads it back: the arguments stay apart (they
// were joined with spaces, so "sh -c sleep 600" could be three words or
// two) and a newline inside one cannot split the session's line.
func TestListAndStartQuoteTheCommand(t *testing.T) {
	t.Parallel()
	c := connect(t)
	cmd := []string{"sh", "-c", "sleep 600 # one\ntwo"}
	want := `sh -c $'sleep 600 # one\ntwo'`
	res := c.call("start", map[string]any{"command": cmd})
	if res.IsError || !strings.Contains(text(res), "Started session s1: "+want+"\n") {
		t.Fatalf("start: %s", text(res))
	}
	s := ok[started](c, "status", map[string]any{"session": "s1"})
	t.Cleanup(func() { reap(t, s.Socket, pidOf(t, c, "s1")) })
	res = c.call("list", nil)
	var line string
	for _, l := range strings.Split(text(res), "\n") {
		if strings.HasPrefix(l, "s1: ") {
			line = l
		}
	}
	if !strings.HasPrefix(line, "s1: "+want+" — running") {
		t.Errorf("list: the session's line is %q in\n%s", line, text(res))
	}
}

// pidOf is the daemon pid the list tool gives for a session.
func pidOf(t *testing.T, c *client, session string) int {
	t.Helper()
	l := ok[struct {
		Sessions []struct {
			Session string `json:"session"`
			PID     int    `json:"pid"`
		} `json:"sessions"`
	}](c, "list", nil)
	for _, r := range l.Sessions {
		if r.Session == session {
			return r.PID
		}
	}
	t.Fatalf("list has no session %s", session)
	return 0
}
