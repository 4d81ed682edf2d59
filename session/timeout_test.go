//go:build unix

package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// TestWaitTimeoutDoesNotWrap: a WAIT whose timeout_ms is near or past
// 2^63 ns stays parked until output arrives, instead of answering
// timed_out at once from a duration that wrapped negative.
func TestWaitTimeoutDoesNotWrap(t *testing.T) {
	for _, ms := range []string{"9223372036855", "9223372036854775807", "1e19"} {
		t.Run(ms, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "feed")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			d, err := New(Config{SocketPath: filepath.Join(dir, "s"), Command: []string{"cat", fifo}, Cols: 80, Rows: 24, Scrollback: DefaultScrollback})
			if err != nil {
				t.Fatal(err)
			}
			parked := make(chan struct{}, 1)
			// Set before Serve runs, so the handler sees it without a race.
			d.parkHook = func() {
				select {
				case parked <- struct{}{}:
				default:
				}
			}
			served := make(chan struct{})
			go func() { d.Serve(); close(served) }()
			defer func() { wire.Call(d.SocketPath(), map[string]any{"type": "STOP"}); <-served }()

			answer := make(chan *wire.Response, 1)
			go func() {
				r, err := wire.Call(d.SocketPath(), json.RawMessage(`{"type":"WAIT","activity":true,"timeout_ms":`+ms+`}`))
				if err != nil {
					t.Error(err)
				}
				answer <- r
			}()
			select {
			case <-parked:
			case r := <-answer:
				t.Fatalf("WAIT answered before any output: %+v", r)
			case <-time.After(10 * time.Second):
				t.Fatal("WAIT never parked")
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.WriteString("wake\n")
			select {
			case r := <-answer:
				if r == nil || r.Status != "ok" || string(r.Data) != `{"activity":true,"exited":false}` {
					t.Fatalf("WAIT with timeout_ms %s: %+v", ms, r)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("WAIT did not wake on output")
			}
		})
	}
}
