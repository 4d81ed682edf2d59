//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/session/wire"
)

// registryEnv gives a test a session registry of its own.
func registryEnv(t *testing.T) []string {
	return append(os.Environ(), wire.RuntimeDirEnv+"="+t.TempDir())
}

// ptyplexEnv is ptyplex with an environment.
func ptyplexEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ptyplex %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// startEnv is start with an environment.
func startEnv(t *testing.T, env []string, args ...string) *sess {
	t.Helper()
	r := ptyplexEnv(t, env, append([]string{"start"}, args...)...)
	if r.code != 0 {
		t.Fatalf("start: %v", r)
	}
	s := &sess{t: t}
	for _, line := range strings.Split(r.stdout, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Socket":
			s.sock = v
		case "PID":
			s.pid, _ = strconv.Atoi(v)
		}
	}
	t.Cleanup(func() {
		ptyplex(t, "", "stop", "--socket", s.sock)
		if !waitGone(s.pid, deadline) {
			syscall.Kill(s.pid, syscall.SIGKILL)
		}
	})
	return s
}

func listJSON(t *testing.T, env []string, args ...string) map[string]wire.Listed {
	t.Helper()
	r := ptyplexEnv(t, env, append([]string{"list", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("list: %v", r)
	}
	var list []wire.Listed
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	m := map[string]wire.Listed{}
	for _, l := range list {
		m[l.Socket] = l
	}
	return m
}

func TestListAndPrune(t *testing.T) {
	t.Parallel()
	env := registryEnv(t)
	sock := filepath.Join(t.TempDir(), "a.sock")
	a := startEnv(t, env, "--socket", sock, "--size", "90x20", "--", "cat")
	b := startEnv(t, env, "--", "sh", "-c", "exit 3")
	if out := b.ok("wait", "--quiet"); out != "3\n" {
		t.Fatalf("exit of b: %q", out)
	}
	m := listJSON(t, env)
	la, lb := m[a.sock], m[b.sock]
	if la.State != wire.StateRunning || la.PID != a.pid || strings.Join(la.Command, " ") != "cat" ||
		la.Size == nil || la.Size.Cols != 90 || la.Size.Rows != 20 || !la.Registered {
		t.Errorf("a: %+v", la)
	}
	if lb.State != wire.StateExited || lb.ExitCode == nil || *lb.ExitCode != 3 || lb.PID != b.pid {
		t.Errorf("b: %+v", lb)
	}
	table := ptyplexEnv(t, env, "list")
	if !strings.Contains(table.stdout, "SOCKET") || !strings.Contains(table.stdout, a.sock) || !strings.Contains(table.stdout, "exited(3)") {
		t.Errorf("list table:\n%s", table.stdout)
	}
	// The daemon of a dies without STOP: its socket file stays behind.
	syscall.Kill(a.pid, syscall.SIGKILL)
	if !waitGone(a.pid, deadline) {
		t.Fatal("daemon survived SIGKILL")
	}
	if la := listJSON(t, env)[a.sock]; la.State != wire.StateStale || la.Problem == "" {
		t.Errorf("a after its daemon died: %+v", la)
	}
	r := ptyplexEnv(t, env, "list", "--prune")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed stale session "+a.sock) {
		t.Errorf("list --prune: %v", r)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("stale socket still there: %v", err)
	}
	m = listJSON(t, env)
	if _, ok := m[a.sock]; ok {
		t.Errorf("pruned session still listed: %+v", m[a.sock])
	}
	if lb := m[b.sock]; lb.State != wire.StateExited {
		t.Errorf("prune touched a live session: %+v", lb)
	}
	// A registry entry whose socket is gone altogether (its /tmp directory
	// was cleaned) is stale too, and pruned.
	dir := strings.TrimPrefix(env[len(env)-1], wire.RuntimeDirEnv+"=")
	gone := filepath.Join(t.TempDir(), "gone.sock")
	entry := filepath.Join(dir, "1-lost.json")
	os.WriteFile(entry, []byte(`{"socket":"`+gone+`","pid":1,"command":["lost"]}`), 0o600)
	if l := listJSON(t, env)[gone]; l.State != wire.StateStale || strings.Join(l.Command, " ") != "lost" {
		t.Errorf("entry without a socket: %+v", l)
	}
	if r := ptyplexEnv(t, env, "list", "--prune"); !strings.Contains(r.stdout, "Removed stale session "+gone) {
		t.Errorf("prune of an entry without a socket: %v", r)
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("registry entry not removed: %v", err)
	}
	// stop unregisters.
	b.ok("stop")
	if _, ok := listJSON(t, env)[b.sock]; ok {
		t.Errorf("stopped session still listed")
	}
}

// list's table quotes the COMMAND's arguments as a shell reads them back
// (it joined them with spaces: "sh -c seq 3; sleep 1000"), and spells the
// characters a terminal would act on as escapes; --json has them as they
// are.
func TestListQuotesCommand(t *testing.T) {
	t.Parallel()
	env := registryEnv(t)
	s := startEnv(t, env, "--", "sh", "-c", "seq 3; sleep 1000", "x\x1b]0;title\a")
	s.waitText("3")
	table := ptyplexEnv(t, env, "list")
	want := `sh -c 'seq 3; sleep 1000' $'x\e]0;title\x07'`
	if table.code != 0 || !strings.Contains(table.stdout, want+"\n") || strings.Contains(table.stdout, "\x1b") {
		t.Errorf("list table: want the command as %s:\n%s", want, table.stdout)
	}
	if l := listJSON(t, env)[s.sock]; !slices.Equal(l.Command, []string{"sh", "-c", "seq 3; sleep 1000", "x\x1b]0;title\a"}) {
		t.Errorf("list --json: command %q", l.Command)
	}
}

// A session started at the socket of one whose daemon died is listed
// once, as itself; the dead one's record is stale (it showed the new
// daemon's pid and state under the old command, so the new session was
// listed twice), and pruning removes that record and leaves the live
// socket alone.
func TestListSocketReusedAfterDaemonDied(t *testing.T) {
	t.Parallel()
	env := registryEnv(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	a := startEnv(t, env, "--socket", sock, "--", "sh", "-c", "exec cat # first")
	syscall.Kill(a.pid, syscall.SIGKILL)
	if !waitGone(a.pid, deadline) {
		t.Fatal("daemon survived SIGKILL")
	}
	b := startEnv(t, env, "--socket", sock, "--", "sh", "-c", "exec cat # second")
	entries := func() (live, stale []wire.Listed) {
		t.Helper()
		r := ptyplexEnv(t, env, "list", "--json")
		var list []wire.Listed
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("list --json: %v\n%v", err, r)
		}
		for _, l := range list {
			switch {
			case l.Socket != sock:
			case l.State == wire.StateStale:
				stale = append(stale, l)
			default:
				live = append(live, l)
			}
		}
		return live, stale
	}
	live, stale := entries()
	if len(live) != 1 || live[0].PID != b.pid || live[0].State != wire.StateRunning || !strings.Contains(strings.Join(live[0].Command, " "), "second") {
		t.Errorf("live entries at the reused socket: %+v", live)
	}
	if len(stale) != 1 || stale[0].PID != a.pid || !strings.Contains(strings.Join(stale[0].Command, " "), "first") || stale[0].Problem == "" {
		t.Errorf("the dead daemon's entry: %+v", stale)
	}
	if r := ptyplexEnv(t, env, "list", "--prune"); r.code != 0 || !strings.Contains(r.stdout, "Removed stale session "+sock) {
		t.Errorf("list --prune: %v", r)
	}
	live, stale = entries()
	if len(live) != 1 || live[0].PID != b.pid || len(stale) != 0 {
		t.Errorf("after prune: live %+v, stale %+v", live, stale)
	}
	if st := b.ok("status"); !strings.Contains(st, "Running: true") {
		t.Errorf("the live session after prune: %s", st)
	}
}

// A daemon in another pid namespace (a container sharing /tmp and the
// registry) is seen here under another pid than the one its record
// holds. That says nothing of its life: it is listed as running, and
// prune leaves its record alone.
func TestListDaemonInOtherPIDNamespace(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	requireTool(t, "unshare")
	env := registryEnv(t)
	sock := filepath.Join(t.TempDir(), "ns.sock")
	cmd := exec.Command("unshare", "--pid", "--fork", bin, "start", "--no-daemon", "--socket", sock, "--", "cat")
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ptyplex(t, "", "stop", "--socket", sock)
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	var nsPID string
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PID: "); ok {
			nsPID = v
		}
		if strings.HasPrefix(sc.Text(), "Auto-generated: ") {
			break
		}
	}
	if nsPID == "" {
		t.Fatalf("start in a pid namespace printed no PID (%v)", sc.Err())
	}
	if l := listJSON(t, env)[sock]; l.State != wire.StateRunning {
		t.Errorf("daemon with pid %s in its namespace: %+v", nsPID, l)
	}
	if r := ptyplexEnv(t, env, "list", "--prune"); strings.Contains(r.stdout, "Removed") {
		t.Errorf("list --prune removed a live session's record: %v", r)
	}
	if l, ok := listJSON(t, env)[sock]; !ok || l.State != wire.StateRunning {
		t.Errorf("after prune: %+v (listed %v)", l, ok)
	}
}
