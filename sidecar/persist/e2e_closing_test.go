//go:build unix

package persist_test

import (
	"encoding/json"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// listedRaw asks h for LISTED and returns terminal id's entry as the
// server sent it, fields this package's proto types may not have
// included (nil if it is not listed).
func listedRaw(t *testing.T, h *hosttest.Host, id string) map[string]any {
	t.Helper()
	before := len(h.Now().Frames)
	h.SendJSON(proto.TypeList, struct{}{})
	var body []byte
	h.MustUntil("LISTED", func(s hosttest.Snapshot) bool {
		for _, f := range s.Frames[before:] {
			if f.Type == proto.TypeListed {
				body = f.Body
				return true
			}
		}
		return false
	})
	var l struct {
		Terminals []map[string]any `json:"terminals"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("LISTED %s: %v", body, err)
	}
	for _, e := range l.Terminals {
		if e["terminalId"] == id {
			return e
		}
	}
	return nil
}

// listedRawUntil lists until cond holds for id's entry, within
// hosttest.Timeout (a state with no event to wait on: asked again after
// a short pause).
func listedRawUntil(t *testing.T, h *hosttest.Host, id, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		e := listedRaw(t, h, id)
		if cond(e) {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last entry %v", what, hosttest.Timeout, e)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A terminal the orphan bound closes, whose program ignores SIGHUP, is
// closing for the grace period (SIGKILL at its end): LIST says
// "closing": true meanwhile, and --list "detached, closing", where both
// said only that no host held it;
// once it was killed, it is exited and no longer closing.
func TestListShowsClosing(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	pid := openOrphan(t, h, "c", `trap "" HUP; exec sleep 1000`, ms(50))
	h.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "c"})
	h.WaitControl(proto.TypeDetached, "c")
	e := listedRawUntil(t, h, "c", "the orphan bound closing it", func(e map[string]any) bool {
		return e != nil && e["closing"] == true
	})
	if e["attached"] != false || e["exited"] != false || e["orphanInMs"] != nil {
		t.Fatalf("LISTED while closing: %v", e)
	}
	// --list says so too, for people.
	closingLine := regexp.MustCompile(`(?m)^c .* detached, closing `)
	for {
		out, err := s.run("--list")
		if err != nil {
			t.Fatalf("--list: %v\n%s", err, out)
		}
		if closingLine.MatchString(out) {
			break
		}
		if e := listedRaw(t, h, "c"); e == nil || e["closing"] != true {
			t.Fatalf("--list never said closing while LIST did:\n%s", out)
		}
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the program ignores SIGHUP, yet it is gone while closing: %v", err)
	}
	e = listedRawUntil(t, h, "c", "killed at the end of the grace period", func(e map[string]any) bool {
		return e != nil && e["exited"] == true
	})
	if e["closing"] != nil || e["signal"] != "SIGKILL" {
		t.Fatalf("LISTED once killed: %v, want no closing and signal SIGKILL", e)
	}
}
