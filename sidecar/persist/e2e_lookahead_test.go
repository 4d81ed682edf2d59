//go:build unix

package persist_test

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// pasteBound is the deadline of a paste of tens of MiB through a PTY,
// generous for the race detector on a busy machine; the waits end as soon
// as the bytes are there.
const pasteBound = 90 * time.Second

// A terminal opened with credit whose child echoes (a raw cat) reads its
// input only while its output has credit (and room in its journal, here
// 1 MiB). A host pastes 20 MiB into it (the child starts reading once the
// paste was held back) while it grants credit for every
// byte it reads, paced as the Go client paces a paste (PROTOCOL.md,
// INPUT): 512 KiB at a time, each piece followed by a PING whose PONG it
// waits for, with a 16 KiB window. Past the 16 MiB input bound the server
// stopped reading the connection, the CREDITs stayed behind the INPUT it
// held, and host and server waited for each other for ever: the PONG of
// the piece held back never came. The server now reads on while it holds
// the INPUT back and applies those CREDITs: the paste comes back whole,
// and each PING's PONG comes once the INPUT before it was all taken.
//
// No unpaced case: a host that writes INPUT as fast as the connection
// takes it breaks the rule PROTOCOL.md sets (no more than 1 MiB of INPUT
// ahead of a CREDIT it owes). Once the look-ahead is full, a CREDIT lands
// behind what the pipes and sockets hold (the copying bridge's socket
// buffer alone is 1 MiB), and the child reads only as far as the credit
// in flight lets it: even with a 1 MiB window such a paste stopped at
// the window under the portable leg's load.
func TestPasteIntoEchoingCreditedTerminal(t *testing.T) {
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			s := newServer(t)
			if mode == "copy" {
				s.env = append(s.env, bridgeCopyEnv)
			}
			pasteIntoEcho(t, s, 20<<20, 16<<10)
		})
	}
}

// pasteIntoEcho pastes n bytes into a raw cat opened with a credit window
// of window bytes, paced: pieces of 512 KiB, each followed by a PING
// whose PONG it waits for before the next.
func pasteIntoEcho(t *testing.T, s *server, n, window int) {
	h := s.host()
	// The child reads nothing until the FIFO is opened, so that the
	// paste surely fills its input queue, however fast the child is.
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "echo", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args":   []string{"-c", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s; exec cat", fifo)},
		"credit": window, "journal": 1 << 20})
	autoCreditFor(h, "echo", pasteBound)
	h.WaitOutput("echo", "ready\n")
	data := pasteBytes(n)
	const piece = 512 << 10
	sent := make(chan error, 1)
	go func() {
		for i := 0; i*piece < n; i++ {
			if err := sendInput(h, "echo", data[i*piece:min((i+1)*piece, n)], 64<<10); err != nil {
				sent <- err
				return
			}
			h.Send(proto.TypePing, []byte(fmt.Sprintf(`{"seq":%d}`, i+1)))
			if _, err := h.Until(pasteBound, func(s hosttest.Snapshot) bool { return pongs(s) > i }); err != nil {
				sent <- fmt.Errorf("PONG %d: %w", i+1, err)
				return
			}
		}
		sent <- nil
	}()
	waitFor(t, "the paste held back", func() bool { return strings.Contains(s.log(), `INPUT for terminal "echo" waits`) })
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	want := append([]byte("ready\n"), data...)
	sn, err := h.Until(pasteBound, func(s hosttest.Snapshot) bool {
		return len(s.Outputs["echo"]) >= len(want) && pongs(s) == (n+piece-1)/piece
	})
	if err != nil {
		t.Fatalf("paste of %d bytes: %v; echoed %d bytes, %d PONGs", n, err, len(sn.Outputs["echo"]), pongs(sn))
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if i := firstDifference(sn.Outputs["echo"], want); i >= 0 {
		t.Fatalf("the echo differs from the paste at byte %d of %d (received %d)", i, len(want), len(sn.Outputs["echo"]))
	}
}

// While a connection's INPUT waits for a child that reads nothing, the
// server reads on: a CREDIT for another terminal the connection holds,
// and one for a terminal it views, are applied at once (their output
// flows), but a PING read ahead is not answered before the INPUT ahead
// of it was taken (its PONG says every frame before it was; a host that
// paces its paste by PONG counts on that): it is answered once the
// child reads. A PING that asks for its PONG at once is answered at once.
func TestCreditsTakenAndPingKeptWhileInputHeld(t *testing.T) {
	s := newServer(t)
	a, b := s.host(), s.host()
	const shown = 100000
	print := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; exec cat", shown)
	// b holds "viewed", without credit; a views it, with credit.
	b.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "viewed", "cols": 80, "rows": 24,
		"cmd": "/bin/sh", "args": []string{"-c", print}})
	b.MustUntil("viewed's output", func(s hosttest.Snapshot) bool { return len(s.Outputs["viewed"]) == shown })
	const window = 1024
	a.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "flood", "cols": 80, "rows": 24,
		"cmd": "/bin/sh", "args": []string{"-c", print}, "credit": window})
	credit := uint64(window)
	a.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "viewed", Credit: &credit, Mode: proto.AttachView})
	a.MustUntil("a window of each", func(s hosttest.Snapshot) bool {
		return len(s.Outputs["flood"]) == window && len(s.Outputs["viewed"]) == window
	})

	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 17 << 20 // one MiB past the bound
	a.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "stuck", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; head -c %d | md5sum", fifo, n)}})
	a.WaitOutput("stuck", "ready")
	data := pasteBytes(n)
	if err := sendInput(a, "stuck", data, 1<<20); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the paste's last MiB held back", func() bool {
		return strings.Contains(s.log(), `INPUT for terminal "stuck" waits`)
	})
	a.Send(proto.TypePing, []byte(`{"seq":7}`))
	a.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "flood", Bytes: window})
	a.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "viewed", Bytes: window})
	// Both CREDITs were read after the PING.
	sn := a.MustUntil("the CREDITs behind the held INPUT taken", func(s hosttest.Snapshot) bool {
		return len(s.Outputs["flood"]) == 2*window && len(s.Outputs["viewed"]) == 2*window
	})
	if pongs(sn) != 0 {
		t.Fatalf("PONG before the INPUT ahead of its PING was taken")
	}
	// A keepalive's PING, which asks for its PONG at once, is answered
	// while the INPUT still waits: the silence of a long paste must not
	// look like a dead connection.
	a.Send(proto.TypePing, []byte(`{"seq":8,"now":true}`))
	sn = a.MustUntil("the keepalive's PONG", func(s hosttest.Snapshot) bool { return pongs(s) > 0 })
	if p := pongBodies(sn); len(p) != 1 || p[0] != `{"seq":8,"now":true}` {
		t.Fatalf("PONGs while the INPUT waits: %q, want only the keepalive's", p)
	}

	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	sum := fmt.Sprintf("%x", md5.Sum(data))
	a.MustUntil("the paste read and the PONG", func(s hosttest.Snapshot) bool {
		return strings.Contains(s.Output("stuck"), sum) && pongs(s) == 2
	})
}

// pongBodies are the bodies of the PONGs h received, in order.
func pongBodies(s hosttest.Snapshot) []string {
	var b []string
	for _, f := range s.Frames {
		if f.Type == proto.TypePong {
			b = append(b, string(f.Body))
		}
	}
	return b
}

// autoCreditFor grants terminal id credit for every byte h receives, as
// a host that consumes its output at once does, until nothing arrives
// for quiet or h's stream ends.
func autoCreditFor(h *hosttest.Host, id string, quiet time.Duration) {
	go func() {
		granted := 0
		for {
			sn, err := h.Until(quiet, func(s hosttest.Snapshot) bool { return len(s.Outputs[id]) > granted })
			if err != nil {
				return
			}
			n := len(sn.Outputs[id]) - granted
			granted += n
			if h.Send(proto.TypeCredit, proto.Marshal(proto.Credit{TerminalID: id, Bytes: uint64(n)})) != nil {
				return
			}
		}
	}()
}

// pongs counts the PONGs h received.
func pongs(s hosttest.Snapshot) int {
	n := 0
	for _, f := range s.Frames {
		if f.Type == proto.TypePong {
			n++
		}
	}
	return n
}

// pasteBytes is n bytes of noise, the same for the same n.
func pasteBytes(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(n >> 20), 7}).Read(b)
	return b
}

// sendInput sends data to terminal id in INPUT frames of size bytes, as
// fast as the connection takes them.
func sendInput(h *hosttest.Host, id string, data []byte, size int) error {
	for len(data) > 0 {
		k := min(size, len(data))
		if err := h.SendRaw(proto.AppendDataFrame(nil, proto.TypeInput, id, data[:k])); err != nil {
			return fmt.Errorf("INPUT for %s: %w", id, err)
		}
		data = data[k:]
	}
	return nil
}

// firstDifference is the first index where got and want differ, or -1.
func firstDifference(got, want []byte) int {
	if bytes.Equal(got, want) {
		return -1
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	return i
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
