//go:build unix

package persist_test

import (
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A keepalive's PING ("now") is answered while a paste waits for a child
// that reads nothing through either kind of bridge: one that hands the
// host's pipes to the server and one that copies the frames (the copy
// holds nothing back: the server's look-ahead reads the PING through it).
// A pacing PING sent before it is still answered only once the INPUT
// ahead of it was taken, so the two PONGs come in the other order.
func TestPingNowThroughEitherBridge(t *testing.T) {
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			s := newServer(t)
			if mode == "copy" {
				s.env = append(s.env, bridgeCopyEnv)
			}
			h := s.host()
			fifo := heldPaste(t, s, h)
			h.Send(proto.TypePing, []byte(`{"paste":1}`))
			h.Send(proto.TypePing, []byte(`{"seq":2,"now":true}`))
			sn := h.MustUntil("the keepalive's PONG", func(s hosttest.Snapshot) bool { return pongs(s) > 0 })
			if p := pongBodies(sn); len(p) != 1 || p[0] != `{"seq":2,"now":true}` {
				t.Fatalf("PONGs while the INPUT waits: %q, want only the keepalive's", p)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			sn = h.MustUntil("the pacing PONG once the child read", func(s hosttest.Snapshot) bool { return pongs(s) == 2 })
			if p := pongBodies(sn); p[1] != `{"paste":1}` {
				t.Fatalf("PONGs: %q", p)
			}
		})
	}
}
