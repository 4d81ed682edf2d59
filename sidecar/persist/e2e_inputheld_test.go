//go:build unix

package persist_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A host pastes past the 16 MiB input bound into a terminal whose child
// reads nothing, and goes away (closes its end) while the server holds
// its INPUT back. The server must notice at once: the terminal detached
// (so its output goes to the journal rather than waiting for credit no
// host will grant) and the host's bridge told that its host ended. It
// waited for the child to read instead, for ever for one that waits for
// its host: the connection stayed with its terminals attached and the
// bridge kept running.
func TestHostGoneWhileInputHeld(t *testing.T) {
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			s := newServer(t)
			if mode == "copy" {
				s.env = append(s.env, bridgeCopyEnv)
			}
			h := s.host()
			heldPaste(t, s, h)
			h.CloseStdin()
			if _, err := h.WaitExit(hosttest.Timeout); err != nil {
				t.Fatalf("the bridge of a host that closed its end while its INPUT was held: %v", err)
			}
			other := s.host()
			l := waitDetached(t, other, "stuck")
			if e, ok := entry(l, "stuck"); !ok || e.Exited {
				t.Fatalf("terminal stuck should live on detached: %+v", l)
			}
		})
	}
}

// When the host goes away while its INPUT waits, that INPUT is dropped;
// an INPUT it sent after it, read ahead and kept, must be dropped too,
// although it would fit in the queue (a small one, beside the 16 MiB
// queued): the child would otherwise read a paste with a hole in it, the
// end of a command without its start. Input a later holder sends goes
// through as usual.
func TestInputAfterADroppedInputIsDropped(t *testing.T) {
	s := newServer(t)
	h := s.host()
	dir := t.TempDir()
	fifo, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "t", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; exec cat >%s", fifo, out)}})
	h.WaitOutput("t", "ready")
	if err := sendInput(h, "t", bytes.Repeat([]byte("x"), 17<<20), 1<<20); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the paste's last MiB held back", func() bool {
		return strings.Contains(s.log(), `INPUT for terminal "t" waits`)
	})
	h.Input("t", "MARK")
	h.CloseStdin()
	if _, err := h.WaitExit(hosttest.Timeout); err != nil {
		t.Fatalf("the bridge of the host gone: %v", err)
	}
	b := s.host()
	if at := attachAnswer(t, b, "t", map[string]any{"terminalId": "t", "offset": 0}); at.Type != proto.TypeAttached {
		t.Fatalf("ATTACH: %s", at.Raw)
	}
	b.Input("t", "end\n")
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	var got []byte
	waitFor(t, "the later holder's input read", func() bool {
		got, _ = os.ReadFile(out)
		return bytes.HasSuffix(got, []byte("end\n"))
	})
	if bytes.Contains(got, []byte("MARK")) {
		t.Fatalf("the child read the INPUT sent after the one dropped (%d bytes read, ending %q)", len(got), tail(string(got), 40))
	}
	if x := bytes.Count(got, []byte("x")); x > 16<<20 || x+len("end\n") != len(got) {
		t.Fatalf("the child read %d bytes, %d of them the paste's: want at most the 16 MiB queued, then end", len(got), x)
	}
}

// A host's INPUT waits for a child that reads nothing, and another host
// takes the terminal over: that INPUT is dropped, not delivered once the
// child reads. The terminal's input is its new holder's; the previous
// one's wait went on, and its INPUT reached the child after the new
// holder's keystrokes could have.
func TestTakeoverDropsTheInputThatWaits(t *testing.T) {
	s := newServer(t)
	a := s.host()
	dir := t.TempDir()
	fifo, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	a.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "t", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; exec cat >%s", fifo, out)}})
	a.WaitOutput("t", "ready")
	// 17 frames of 1 MiB, each of one letter: the 17th does not fit in
	// the 16 MiB queue and waits.
	for i := range 17 {
		frame := proto.AppendDataFrame(nil, proto.TypeInput, "t", bytes.Repeat([]byte{byte('A' + i)}, 1<<20))
		if err := a.SendRaw(frame); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the 17th MiB held back", func() bool {
		return strings.Contains(s.log(), `INPUT for terminal "t" waits`)
	})
	b := s.host()
	b.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "t"})
	a.WaitControl(proto.TypeDetached, "t")
	waitFor(t, "the held INPUT dropped", func() bool {
		return strings.Contains(s.log(), `INPUT for terminal "t": another connection took the terminal over while it waited; it is dropped`)
	})
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := b.SendRaw(proto.AppendDataFrame(nil, proto.TypeInput, "t", []byte("END"))); err != nil {
		t.Fatal(err)
	}
	var got []byte
	waitFor(t, "the new holder's input read", func() bool {
		got, _ = os.ReadFile(out)
		return bytes.HasSuffix(got, []byte("END"))
	})
	if n := bytes.Count(got, []byte{'Q'}); n != 0 {
		t.Fatalf("the child read %d bytes of the INPUT that waited when the terminal was taken over", n)
	}
	if n := bytes.Count(got, []byte{'P'}); n != 1<<20 {
		t.Fatalf("the child read %d bytes of the 16th MiB, queued before the takeover, want all %d", n, 1<<20)
	}
}

// A bridge that copies (PTYPLEX_BRIDGE_COPY, or a server older than the
// hand-over) has frames of its host in the server's socket when the
// server stops: here the server reads no more of them while an INPUT
// waits for a child that reads nothing. The server's close then resets
// the connection, and the bridge took the reset for its host's fault
// ("to the host: ... connection reset by peer") and exited 1; it ends
// quietly, with 0, as it does when the server goes away without a word.
func TestCopyBridgeEndsQuietlyWhenTheServerStopsWithFramesUnread(t *testing.T) {
	s := newServer(t)
	s.env = append(s.env, bridgeCopyEnv)
	h := s.host()
	h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "stuck", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", "stty raw -echo -iexten; echo ready; exec sleep 100000"}})
	h.WaitOutput("stuck", "ready")
	go sendInput(h, "stuck", pasteBytes(24<<20), 1<<20) // past the bound and the look-ahead: the rest stays in the socket
	waitFor(t, "the paste held back", func() bool {
		return strings.Contains(s.log(), `INPUT for terminal "stuck" waits`)
	})
	if out, err := s.run("--stop"); err != nil {
		t.Fatalf("--stop: %v\n%s", err, out)
	}
	code, err := h.WaitExit(hosttest.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || strings.Contains(h.Stderr(), "to the host") {
		t.Fatalf("the bridge exited %d; stderr:\n%s", code, h.Stderr())
	}
}

// heldPaste opens terminal "stuck" on h, whose child reads nothing until
// the FIFO whose path it returns is opened, pastes 17 MiB into it (one
// past the input bound) and waits until the server holds the last MiB
// back. Opening and closing the FIFO lets the child read it all.
func heldPaste(t *testing.T, s *server, h *hosttest.Host) (fifo string) {
	t.Helper()
	fifo = filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "stuck", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; exec cat >/dev/null", fifo)}})
	h.WaitOutput("stuck", "ready")
	if err := sendInput(h, "stuck", pasteBytes(17<<20), 1<<20); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the paste's last MiB held back", func() bool {
		return strings.Contains(s.log(), `INPUT for terminal "stuck" waits`)
	})
	return fifo
}
