//go:build linux

package client

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// After the server dies, List reports its terminals dead (with
// --journal-dir), and Revive starts one again: the old screen first,
// then the new program, under the same id.
func TestPersistentRevive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "r")
	opts := Options{SidecarPath: sidecarBin, Env: env, Args: []string{"--journal-dir", t.TempDir() + "/j"}}
	c1, err := Persistent("r", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	term, err := c1.Open(ctx, OpenOptions{ID: "rv", Cmd: "/bin/sh", Args: []string{"-c", `echo "run $1"; exec cat`, "sh", "first"}})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(term)
	if line, err := r.ReadString('\n'); err != nil || line != "run first\r\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	pid := term.Pid()
	// The server is the parent of the terminal's program.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	serverPid, _ := strconv.Atoi(f[1])
	if err := syscall.Kill(serverPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := term.Wait(); err == nil {
		t.Fatal("the terminal did not end with its server")
	}

	c2, err := Persistent("r", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	var dead bool
	for deadline := time.Now().Add(10 * time.Second); !dead && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, e := range mustList(t, ctx, c2) {
			dead = dead || (e.TerminalID == "rv" && e.Dead)
		}
	}
	if !dead {
		t.Fatal("no dead terminal rv after the server's death")
	}
	t2, err := c2.Revive(ctx, "rv")
	if err != nil {
		t.Fatal(err)
	}
	if t2.Pid() == pid || t2.Pid() <= 0 {
		t.Fatalf("revived pid %d (old %d)", t2.Pid(), pid)
	}
	r2 := bufio.NewReader(t2)
	var got strings.Builder
	for strings.Count(got.String(), "run first") < 2 {
		line, err := r2.ReadString('\n')
		if err != nil {
			t.Fatalf("after Revive: %q, %v", got.String(), err)
		}
		got.WriteString(line)
	}
	if _, err := c2.Revive(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no dead terminal "nope"`) {
		t.Fatalf("Revive of no dead terminal: %v", err)
	}
	t2.Close()
}

func mustList(t *testing.T, ctx context.Context, c *Client) []proto.ListedTerminal {
	t.Helper()
	l, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
