//go:build unix

package persist_test

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A terminal starts from the environment of the bridge its host spawned
// (sent in the bridge's HELLO), whole: nothing of the server's (the first
// bridge's) environment that the bridge lacks gets in. A client of the
// socket that sends no environment gets the server's, as before.
func TestTerminalEnvironmentIsTheBridges(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const script = `echo "server=$PTYPLEX_T_SERVER bridge=$PTYPLEX_T_BRIDGE open=$PTYPLEX_T_OPEN end"`
	withEnv := func(extra ...string) *hosttest.Host {
		cmd := exec.Command(sidecarBin, "--persist", s.name)
		cmd.Env = append(append([]string(nil), s.env...), extra...)
		return hosttest.StartCmd(t, cmd)
	}
	// The first bridge starts the server, with its environment.
	first := withEnv("PTYPLEX_T_SERVER=yes")
	first.Open(proto.Open{TerminalID: "first", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script}})
	first.WaitOutput("first", "server=yes bridge= open= end")

	for _, extra := range [][]string{nil, {bridgeCopyEnv}} {
		h := withEnv(append([]string{"PTYPLEX_T_BRIDGE=yes"}, extra...)...)
		h.Open(proto.Open{TerminalID: "second", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script},
			Env: map[string]string{"PTYPLEX_T_OPEN": "yes"}})
		h.WaitOutput("second", "server= bridge=yes open=yes end")
		h.WaitControl(proto.TypeExit, "second")
	}

	// No bridge, no HELLO: the server's own environment.
	c, err := net.Dial("unix", s.dir+"/sidecar/"+s.name+".sock")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hosttest.Timeout))
	open := proto.Open{TerminalID: "direct", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script}}
	if err := proto.WriteFrame(c, proto.TypeOpen, proto.Marshal(open)); err != nil {
		t.Fatal(err)
	}
	r := proto.NewReader(c)
	var out strings.Builder
	for !strings.Contains(out.String(), " end") {
		f, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("reading the direct client's frames (output so far %q): %v", out.String(), err)
		}
		if f.Type == proto.TypeOutput {
			if _, data, err := proto.ParseData(f.Body); err == nil {
				out.Write(data)
			}
		}
	}
	if !strings.Contains(out.String(), "server=yes bridge= open= end") {
		t.Fatalf("a direct client's terminal: %q, want the server's environment", out.String())
	}
}

// An OPEN without a cwd starts where the bridge runs, as under a plain
// sidecar its host had spawned there, whichever bridge started the
// server and wherever that was; an OPEN's own cwd still wins. Handing the
// descriptors over or copying, the same.
func TestTerminalDirectoryIsTheBridges(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	first, second, named := t.TempDir(), t.TempDir(), t.TempDir()
	inDir := func(dir string, extra ...string) *hosttest.Host {
		cmd := exec.Command(sidecarBin, "--persist", s.name)
		cmd.Env = append(append([]string(nil), s.env...), extra...)
		cmd.Dir = dir
		return hosttest.StartCmd(t, cmd)
	}
	pwd := []string{"-c", `echo "in=$(pwd -P) end"`}
	real := func(dir string) string {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The first bridge starts the server in its own directory.
	h := inDir(first)
	h.Open(proto.Open{TerminalID: "first", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: pwd})
	h.WaitOutput("first", "in="+real(first)+" end")

	for _, extra := range [][]string{nil, {bridgeCopyEnv}} {
		h := inDir(second, extra...)
		h.Open(proto.Open{TerminalID: "second", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: pwd})
		h.WaitOutput("second", "in="+real(second)+" end")
		h.WaitControl(proto.TypeExit, "second")
		h.Open(proto.Open{TerminalID: "named", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: pwd, Cwd: &named})
		h.WaitOutput("named", "in="+real(named)+" end")
		h.WaitControl(proto.TypeExit, "named")
	}
}

// A terminal revived after a crash starts from the environment it was
// opened with: its bridge's, not the server's, whichever of them
// started the server that revives it.
func TestRevivedTerminalKeepsTheBridgesEnvironment(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	const script = `echo "server=$PTYPLEX_T_SERVER bridge=$PTYPLEX_T_BRIDGE open=$PTYPLEX_T_OPEN end"; exec cat`
	withEnv := func(extra ...string) *hosttest.Host {
		cmd := exec.Command(sidecarBin, "--persist", s.name, "--journal-dir", jdir)
		cmd.Env = append(append([]string(nil), s.env...), extra...)
		return hosttest.StartCmd(t, cmd)
	}
	first := withEnv("PTYPLEX_T_SERVER=yes")
	first.Open(proto.Open{TerminalID: "sh", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script}})
	first.WaitOutput("sh", "server=yes bridge= open= end")
	second := withEnv("PTYPLEX_T_BRIDGE=yes")
	second.Open(proto.Open{TerminalID: "other", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script},
		Env: map[string]string{"PTYPLEX_T_OPEN": "yes"}})
	second.WaitOutput("other", "server= bridge=yes open=yes end")
	killServer(t, s)
	first.WaitExit(hosttest.Timeout)
	second.WaitExit(hosttest.Timeout)

	// The server that revives them is started by a bridge with neither.
	h := withEnv()
	for _, id := range []string{"sh", "other"} {
		h.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: id})
		h.WaitControl(proto.TypeOpened, id)
	}
	// Each revived terminal shows its old screen, then its new run: the
	// same line twice.
	for id, line := range map[string]string{"sh": "server=yes bridge= open= end\r\n", "other": "server= bridge=yes open=yes end\r\n"} {
		h.MustUntil(id+"'s old screen, then its new run", func(sn hosttest.Snapshot) bool {
			return strings.Count(sn.Output(id), line) == 2
		})
	}
}
