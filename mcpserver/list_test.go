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
