//go:build unix

package persist_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// bridgeCopyEnv makes a bridge copy frames instead of handing the host's
// descriptors to the server.
const bridgeCopyEnv = "PTYPLEX_BRIDGE_COPY=1"

// server is one persistent sidecar of a test, in a runtime directory of
// its own, stopped when the test ends.
type server struct {
	t    *testing.T
	name string
	env  []string
	dir  string
}

// log returns the server's log so far.
func (s *server) log() string {
	b, _ := os.ReadFile(s.dir + "/sidecar/" + s.name + ".log")
	return string(b)
}

func newServer(t *testing.T, extra ...string) *server {
	t.Helper()
	dir := t.TempDir()
	s := &server{t: t, name: "t", env: append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+dir), dir: dir}
	t.Cleanup(func() {
		out, err := s.run("--stop")
		if err != nil && !strings.Contains(out, "is running") {
			t.Errorf("--stop: %v\n%s", err, out)
		}
		if t.Failed() {
			if b, err := os.ReadFile(dir + "/sidecar/t.log"); err == nil {
				t.Logf("server log:\n%s", b)
			}
		}
	})
	return s
}

// host starts a bridge, as a host would: `ptyplex-sidecar --persist NAME`.
func (s *server) host(extra ...string) *hosttest.Host {
	s.t.Helper()
	cmd := exec.Command(sidecarBin, append([]string{"--persist", s.name}, extra...)...)
	cmd.Env = s.env
	return hosttest.StartCmd(s.t, cmd)
}

// run runs the sidecar binary with --persist NAME and args to its end.
func (s *server) run(args ...string) (string, error) {
	cmd := exec.Command(sidecarBin, append([]string{"--persist", s.name}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// list asks h for LISTED and decodes the answer that follows the frames
// seen so far.
func list(t *testing.T, h *hosttest.Host) proto.Listed {
	t.Helper()
	before := len(h.Now().Frames)
	h.SendJSON(proto.TypeList, struct{}{})
	var l proto.Listed
	h.MustUntil("LISTED", func(s hosttest.Snapshot) bool {
		for _, f := range s.Frames[before:] {
			if f.Type == proto.TypeListed {
				if err := json.Unmarshal(f.Body, &l); err != nil {
					t.Fatalf("LISTED %s: %v", f.Body, err)
				}
				return true
			}
		}
		return false
	})
	return l
}

// listUntil lists until cond holds for the answer, within
// hosttest.Timeout. The server's state has no event to wait on, so it
// asks again after a short pause (each LIST adds frames to the host's
// record, which a tight loop would grow by thousands).
func listUntil(t *testing.T, h *hosttest.Host, what string, cond func(proto.Listed) bool) proto.Listed {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		l := list(t, h)
		if cond(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last LISTED %+v", what, hosttest.Timeout, l)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitWriteStuck lists through h until terminal id, attached to a host
// that reads nothing and running a program that never stops writing,
// produced nothing for 200 ms: once the connection's buffers are full,
// the frame on its way to the host is stuck in a write, and the reader
// waits for it (it was writing the frame itself) or for journal room
// (the pump was), and the program for the reader. A writer that is only
// slow does not stop that long.
func waitWriteStuck(t *testing.T, h *hosttest.Host, id string) {
	t.Helper()
	var last uint64
	var since time.Time
	listUntil(t, h, "the write to the hung host stuck", func(l proto.Listed) bool {
		e, ok := entry(l, id)
		if !ok || !e.Attached || e.Produced == 0 || e.Produced != last {
			last, since = e.Produced, time.Now()
			return false
		}
		return time.Since(since) >= 200*time.Millisecond
	})
}

// waitDetached lists until terminal id is no longer attached (the server
// noticed that the previous host has gone).
func waitDetached(t *testing.T, h *hosttest.Host, ids ...string) proto.Listed {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		l := list(t, h)
		attached := false
		for _, e := range l.Terminals {
			for _, id := range ids {
				if e.TerminalID == id && e.Attached {
					attached = true
				}
			}
		}
		if !attached {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminals %v still attached after the host died: %+v", ids, l)
		}
	}
}

func entry(l proto.Listed, id string) (proto.ListedTerminal, bool) {
	for _, e := range l.Terminals {
		if e.TerminalID == id {
			return e, true
		}
	}
	return proto.ListedTerminal{}, false
}

// control returns the first control frame of type typ about id after
// index from.
func controlAfter(s hosttest.Snapshot, from int, typ proto.Type, id string) (map[string]any, bool) {
	for _, f := range s.Frames[from:] {
		if f.Type != typ {
			continue
		}
		var m map[string]any
		if json.Unmarshal(f.Body, &m) == nil && m["terminalId"] == id {
			return m, true
		}
	}
	return nil, false
}

// autoCredit grants each of ids credit for every byte h receives, as a
// host that consumes its output at once does, until h's stream ends.
func autoCredit(h *hosttest.Host, ids []string) {
	go func() {
		granted := map[string]int{}
		for {
			sn, err := h.Until(hosttest.Timeout, func(s hosttest.Snapshot) bool {
				for _, id := range ids {
					if len(s.Outputs[id]) > granted[id] {
						return true
					}
				}
				return false
			})
			if err != nil {
				return
			}
			for _, id := range ids {
				if n := len(sn.Outputs[id]) - granted[id]; n > 0 {
					granted[id] += n
					body := proto.Marshal(proto.Credit{TerminalID: id, Bytes: uint64(n)})
					if h.Send(proto.TypeCredit, body) != nil {
						return
					}
				}
			}
		}
	}()
}

// takeRound adds what host snapshot sn received of each terminal not yet
// done to got, checks that every ATTACH after the first round lost
// nothing, and marks the terminals whose EXIT (status 0) came.
func takeRound(t *testing.T, sn hosttest.Snapshot, round int, ids []string, got []bytes.Buffer, done map[string]bool) {
	t.Helper()
	for i, id := range ids {
		if done[id] {
			continue
		}
		if round > 0 {
			at, ok := controlAfter(sn, 0, proto.TypeAttached, id)
			if !ok || at["lost"] != float64(0) {
				t.Fatalf("round %d: ATTACHED for %s: %v (want lost 0)", round, id, at)
			}
		}
		got[i].Write(sn.Outputs[id])
		if ex, ok := controlAfter(sn, 0, proto.TypeExit, id); ok {
			if ex["exitCode"] != float64(0) {
				t.Fatalf("%s: EXIT %v", id, ex)
			}
			done[id] = true
		}
	}
}

// checkStreams fails unless every terminal exited and received exactly
// want, naming the first byte that differs.
func checkStreams(t *testing.T, ids []string, got []bytes.Buffer, done map[string]bool, want []byte) {
	t.Helper()
	for i, id := range ids {
		if !done[id] {
			t.Errorf("%s: no EXIT", id)
		}
		if !bytes.Equal(got[i].Bytes(), want) {
			n := 0
			for n < min(got[i].Len(), len(want)) && got[i].Bytes()[n] == want[n] {
				n++
			}
			t.Errorf("%s: received %d bytes, want %d; first difference at byte %d: got %q, want %q", id,
				got[i].Len(), len(want), n, got[i].Bytes()[n:min(n+20, got[i].Len())], want[n:min(n+20, len(want))])
		}
	}
}

// waitFor checks cond until it holds, within hosttest.Timeout: what a
// process holds has no event to wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, hosttest.Timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pid is the server's pid, from its log.
func (s *server) pid() int {
	s.t.Helper()
	m := servingPID.FindStringSubmatch(s.log())
	if m == nil {
		s.t.Fatalf("no pid in the server's log:\n%s", s.log())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
