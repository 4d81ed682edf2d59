//go:build unix

package persist_test

import (
	"fmt"
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
			fifo := filepath.Join(t.TempDir(), "go")
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
