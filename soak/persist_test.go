package soak

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// TestParkNoHost leaves `yes` in a park-mode terminal of the persistent
// sidecar with no host attached (10 s under -soak; in the short run only
// until its journal is full), checking all along that nothing falls out
// of the journal, then attaches and checks that the stream goes on byte
// for byte.
func TestParkNoHost(t *testing.T) {
	const journal = 256 << 10
	env := append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+t.TempDir())
	t.Cleanup(func() {
		cmd := exec.Command(sidecarBin, "--persist", "soak", "--stop")
		cmd.Env = env
		cmd.Run()
	})
	host := func() *hosttest.Host {
		cmd := exec.Command(sidecarBin, "--persist", "soak")
		cmd.Env = env
		return hosttest.StartCmd(t, cmd)
	}
	h1 := host()
	h1.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "y", "cols": 80, "rows": 24, "cmd": "yes",
		"journal": journal, "detached": "park", "credit": 3000})
	h1.MustUntil("3000 bytes", func(s hosttest.Snapshot) bool { return len(s.Output("y")) == 3000 })
	h1.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "y"})
	h1.WaitControl(proto.TypeDetached, "y")
	first := h1.Now().Output("y")

	h2 := host()
	list := func() proto.ListedTerminal {
		before := len(h2.Now().Frames)
		h2.SendJSON(proto.TypeList, struct{}{})
		var l proto.Listed
		h2.MustUntil("LISTED", func(s hosttest.Snapshot) bool {
			for _, f := range s.Frames[before:] {
				if f.Type == proto.TypeListed {
					return json.Unmarshal(f.Body, &l) == nil
				}
			}
			return false
		})
		if len(l.Terminals) != 1 {
			t.Fatalf("LISTED %+v", l)
		}
		return l.Terminals[0]
	}
	full := time.Now()
	for {
		e := list()
		if e.Start != 0 {
			t.Fatalf("park mode dropped %d bytes with no host", e.Start)
		}
		if e.Produced > journal {
			t.Fatalf("produced %d bytes with a %d-byte journal and no host", e.Produced, journal)
		}
		if e.Produced == journal {
			break
		}
		if time.Since(full) > hosttest.Timeout {
			t.Fatalf("the journal never filled: %+v", e)
		}
	}
	// The soak's stretch with no host is its subject, not a wait for an
	// event: yes must stay blocked and the journal intact throughout.
	for end := time.Now().Add(size(time.Duration(0), 10*time.Second)); time.Now().Before(end); {
		if e := list(); e.Start != 0 || e.Produced != journal {
			t.Fatalf("with no host: %+v", e)
		}
	}
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "y", "offset": len(first), "credit": 1 << 30})
	got := h2.MustUntil("the whole journal", func(s hosttest.Snapshot) bool {
		return len(first)+len(s.Output("y")) >= journal
	}).Output("y")
	all := []byte(first + got)
	if want := bytes.Repeat([]byte("y\r\n"), len(all)/3+1)[:len(all)]; !bytes.Equal(all, want) {
		t.Fatal("the stream across the hostless stretch is not yes's output, byte for byte")
	}
	h2.SendJSON(proto.TypeClose, proto.Close{TerminalID: "y"})
	h2.WaitControl(proto.TypeExit, "y")
}
