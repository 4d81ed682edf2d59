//go:build unix

package session

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// Requests sent one after another on separate connections run in the
// order they were sent, even when the client does not wait for each
// answer: here 100 INPUTs (fewer than the daemon's connection limit), each on a connection that is closed at once.
func TestRequestsKeepArrivalOrderAcrossConnections(t *testing.T) {
	out := filepath.Join(t.TempDir(), "typed")
	d := benchDaemon(t, Config{Command: []string{"sh", "-c", "exec cat > " + out}})
	const n = 100
	for i := range n {
		c, err := net.Dial("unix", d.SocketPath())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(c, `{"type":"INPUT","data":"%d\n"}`+"\n", i); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	want := n
	deadline := time.Now().Add(20 * time.Second)
	var got []int
	for {
		b, err := os.ReadFile(out)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		got = got[:0]
		for _, f := range bytes.Fields(b) {
			v, err := strconv.Atoi(string(f))
			if err != nil {
				t.Fatalf("the program read %q", f)
			}
			got = append(got, v)
		}
		if len(got) >= want || time.Now().After(deadline) {
			break
		}
		// Wait for the daemon to work through the queue: a STATUS is
		// answered after every INPUT queued before it.
		wire.Call(d.SocketPath(), map[string]any{"type": "STATUS"})
	}
	if len(got) != want {
		t.Fatalf("the program read %d of %d inputs: %v", len(got), want, got)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("input %d arrived as number %d: %v", i, v, got[max(0, i-5):min(len(got), i+5)])
		}
	}
}

// A client that sends half a request and stops holds later requests up
// once, for arrivalWait, not each of them: the first request after it
// waits, the next ones pass it.
func TestStalledConnectionIsWaitedForOnce(t *testing.T) {
	d := benchDaemon(t, Config{Command: []string{"cat"}})
	stuck, err := net.Dial("unix", d.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	if _, err := stuck.Write([]byte(`{"type":"STA`)); err != nil {
		t.Fatal(err)
	}
	// The first request after it may wait for it (its bytes arrived
	// first); answered at all, it shows the daemon gave up waiting.
	if _, err := wire.Call(d.SocketPath(), map[string]any{"type": "STATUS"}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		began := time.Now()
		if _, err := wire.Call(d.SocketPath(), map[string]any{"type": "STATUS"}); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took >= arrivalWait {
			t.Fatalf("request %d after the stalled one took %v: it waited for it again", i+2, took)
		}
	}
}
