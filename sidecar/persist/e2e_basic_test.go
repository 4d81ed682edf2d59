//go:build unix

package persist_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A terminal outlives the host that opened it, and a new host attaching
// at the offset the first one had reached gets exactly what it missed.
func TestOutlivesHostAndReattaches(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h1 := s.host()
	h1.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "stty -echo; echo first; read x; echo second $x; read y"}})
	opened := h1.WaitControl(proto.TypeOpened, "a")
	if !strings.Contains(opened.Raw, `"persist"`) {
		t.Fatalf("OPENED does not announce persist: %s", opened.Raw)
	}
	got := h1.WaitOutput("a", "first\r\n").Output("a")
	offset := len(got)
	h1.Cmd.Process.Signal(syscall.SIGKILL)
	h1.WaitExit(hosttest.Timeout)

	h2 := s.host()
	l := waitDetached(t, h2, "a")
	e, ok := entry(l, "a")
	if !ok || e.Exited || e.Produced != uint64(offset) || e.Cmd != "/bin/sh" {
		t.Fatalf("LISTED after the host died: %+v (want terminal a, running, %d bytes produced)", l, offset)
	}
	// Input from a connection that does not hold the terminal is refused.
	h2.Input("a", "nope\n")
	h2.WaitControl(proto.TypeError, "a")
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "a", "offset": offset})
	at := h2.WaitControl(proto.TypeAttached, "a")
	if at.Fields["lost"] != float64(0) || at.Fields["offset"] != float64(offset) {
		t.Fatalf("ATTACHED %s, want offset %d and lost 0", at.Raw, offset)
	}
	h2.Input("a", "x\n")
	h2.WaitOutput("a", "second x\r\n")
	if out := h2.Now().Output("a"); out != "second x\r\n" {
		t.Fatalf("new host got %q, want only what it missed", out)
	}
	h2.Input("a", "y\n")
	ex := h2.WaitControl(proto.TypeExit, "a")
	if ex.Fields["exitCode"] != float64(0) {
		t.Fatalf("EXIT %s", ex.Raw)
	}
	if l := list(t, h2); len(l.Terminals) != 0 {
		t.Fatalf("terminal still listed after its EXIT was read: %+v", l)
	}
}

// The persistent server answers PING through the bridge with the PING's
// body and announces the keepalive in its HELLO answer, so that a host on
// the far side of a transport can tell a dead connection from a quiet one.
func TestPingThroughBridge(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Send(proto.TypeHello, []byte(`{"version":"v","protocol":1,"features":["hello"]}`))
	h.Send(proto.TypePing, []byte(`{"seq":42}`))
	h.Send(proto.TypePing, []byte(`[1,2]`))
	h.Send(proto.TypePing, []byte(` {"seq": 43} `))
	snap := h.MustUntil("three PONGs", func(s hosttest.Snapshot) bool {
		n := 0
		for _, f := range s.Frames {
			if f.Type == proto.TypePong {
				n++
			}
		}
		return n == 3
	})
	var pongs, hellos []string
	for _, f := range snap.Frames {
		switch f.Type {
		case proto.TypePong:
			pongs = append(pongs, string(f.Body))
		case proto.TypeHelloReply:
			hellos = append(hellos, string(f.Body))
		}
	}
	if len(hellos) != 1 || !strings.Contains(hellos[0], `"keepalive"`) || !strings.Contains(hellos[0], `"persist"`) {
		t.Fatalf("HELLO answers %q, want one announcing keepalive and persist", hellos)
	}
	if strings.Join(pongs, "|") != `{"seq":42}|{}| {"seq": 43} ` {
		t.Fatalf("PONGs %q, want the first PING's body, then {}, then the third's byte for byte", pongs)
	}
}

// Frames of unknown types are dropped, as the seed protocol asks: the PING
// behind them is the only frame answered.
func TestUnknownFramesIgnored(t *testing.T) {
	s := newServer(t)
	h := s.host()
	h.Send(proto.Type(0x3f), []byte(`{"terminalId":"a"}`))
	h.Send(proto.Type(0x7e), nil)
	h.Send(proto.TypeOutput, []byte("x")) // the server's own type, from a host
	h.Send(proto.TypePing, []byte(`{"seq":1}`))
	snap := h.MustUntil("a PONG", func(s hosttest.Snapshot) bool { return len(s.Frames) > 0 })
	if len(snap.Frames) != 1 || snap.Frames[0].Type != proto.TypePong {
		t.Fatalf("only the PING is to be answered; got %v", snap.Frames)
	}
}
