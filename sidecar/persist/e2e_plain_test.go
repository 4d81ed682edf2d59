//go:build unix

package persist_test

import (
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A host that knows nothing of persistence gets the plain sidecar's
// behaviour through the bridge: RESIZE, SIGNAL, FOREGROUND, credit, CLOSE
// and EXIT statuses, an id taken twice.
func TestPlainHostUnderPersist(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.SendJSON(proto.TypeHello, proto.Hello{Version: "test", Protocol: proto.ProtocolVersion, Features: []string{proto.FeatureHello}})
	hello := h.MustUntil("HELLO", func(sn hosttest.Snapshot) bool {
		for _, f := range sn.Frames {
			if f.Type == proto.TypeHelloReply {
				return true
			}
		}
		return false
	})
	for _, f := range hello.Frames {
		if f.Type == proto.TypeHelloReply && !strings.Contains(string(f.Body), `"persist"`) {
			t.Fatalf("HELLO answer without persist: %s", f.Body)
		}
	}
	h.Open(proto.Open{TerminalID: "sh", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "stty -echo; echo ready; read x; stty size; trap 'echo got INT' INT; echo trapped; read y; exec sleep 1000"}})
	h.WaitOutput("sh", "ready\r\n")
	h.Open(proto.Open{TerminalID: "sh", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	if e := h.WaitControl(proto.TypeError, "sh"); !strings.Contains(e.Raw, "terminal id already exists") {
		t.Fatalf("second OPEN of an id: %s", e.Raw)
	}
	h.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "sh", Cols: 100, Rows: 40})
	h.Input("sh", "\n")
	h.WaitOutput("sh", "40 100\r\n")
	h.WaitOutput("sh", "trapped\r\n")
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "sh", Signal: "INT"})
	h.WaitOutput("sh", "got INT\r\n")
	before := len(h.Now().Frames)
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "sh", Signal: "SIGNOPE"})
	sn := h.MustUntil("ERROR for SIGNOPE", func(s hosttest.Snapshot) bool {
		_, ok := controlAfter(s, before, proto.TypeError, "sh")
		return ok
	})
	if m, _ := controlAfter(sn, before, proto.TypeError, "sh"); !strings.Contains(m["message"].(string), "SIGNAL") {
		t.Fatalf("bad SIGNAL: %v", m)
	}
	h.Input("sh", "\n")
	h.SendJSON(proto.TypeForeground, proto.Foreground{TerminalID: "sh"})
	fg := h.WaitControl(proto.TypeForegroundInfo, "sh")
	if fg.Fields["pid"] == nil {
		t.Fatalf("FOREGROUND %s", fg.Raw)
	}
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "sh"})
	if ex := h.WaitControl(proto.TypeExit, "sh"); ex.Fields["signal"] != "SIGHUP" {
		t.Fatalf("EXIT after CLOSE: %s", ex.Raw)
	}

	// Credit: never more output than granted, then the rest once granted.
	credit := uint64(1000)
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "yes | head -c 20000"}, Credit: &credit})
	h.MustUntil("1000 bytes", func(s hosttest.Snapshot) bool { return len(s.Output("c")) == 1000 })
	list(t, h) // a round trip: had more been sent, it would most likely be here by now
	if n := len(h.Now().Output("c")); n != 1000 {
		t.Fatalf("%d bytes with 1000 of credit", n)
	}
	h.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "c", Bytes: 1 << 20})
	ex := h.WaitControl(proto.TypeExit, "c")
	if n := len(h.Now().Output("c")); n != 30000 || ex.Fields["exitCode"] != float64(0) {
		t.Fatalf("%d bytes and %s after the grant", n, ex.Raw)
	}
}
