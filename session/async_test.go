//go:build unix

package session

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parkedDaemon runs cat in a daemon whose WAITs report when they block.
func parkedDaemon(t *testing.T) (*Daemon, <-chan struct{}) {
	d := benchDaemon(t, Config{Command: []string{"cat"}})
	parked := make(chan struct{}, 16)
	d.parkHook = func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	}
	return d, parked
}

func sendRaw(t *testing.T, sock, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(req + "\n")); err != nil {
		t.Fatal(err)
	}
	return c
}

func waitParked(t *testing.T, parked <-chan struct{}) {
	t.Helper()
	select {
	case <-parked:
	case <-time.After(10 * time.Second):
		t.Fatal("the WAIT never blocked")
	}
}

// A WAIT whose client hangs up ends then, on its own goroutine.
func TestAbandonedWaitEnds(t *testing.T) {
	d, parked := parkedDaemon(t)
	c := sendRaw(t, d.SocketPath(), `{"type":"WAIT"}`)
	waitParked(t, parked)
	c.Close()
	ended := make(chan struct{})
	go func() { d.async.Wait(); close(ended) }() // the only async request
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned WAIT is still pending")
	}
}

// While a WAIT is blocked, INPUT, OUTPUT and STATUS from other
// connections are answered, and the WAIT then wakes on the output.
func TestBlockedWaitHoldsBackNobody(t *testing.T) {
	d, parked := parkedDaemon(t)
	sock := d.SocketPath()
	w := sendRaw(t, sock, `{"type":"WAIT","after_gen":0}`)
	waitParked(t, parked)
	mustCall(t, sock, map[string]any{"type": "STATUS"})
	in := mustCall(t, sock, map[string]any{"type": "INPUT", "data": "hi\r", "with_gen": true})
	if !strings.Contains(string(in.Data), `"output_gen":0`) {
		t.Errorf("INPUT with_gen before any output: %s", in.Data)
	}
	w.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(w).ReadString('\n')
	if err != nil || !strings.Contains(line, `"output_gen":`) || strings.Contains(line, `"output_gen":0`) {
		t.Fatalf("WAIT after_gen 0: %q %v", line, err)
	}
	untilState(t, d, func(st *state) bool { return strings.Contains(st.scr.Text(), "hi") })
	mustCall(t, sock, map[string]any{"type": "OUTPUT"})
}

// BenchmarkWaitGenWake is BenchmarkWaitWake with WAIT "after_gen" (the
// waits tied to input) instead of the activity flag: the latency from
// output to the answer.
func BenchmarkWaitGenWake(b *testing.B) {
	fifo := filepath.Join(b.TempDir(), "feed")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Fatal(err)
	}
	d := benchDaemon(b, Config{Command: []string{"sh", "-c", `exec cat "$0"`, fifo}})
	feed, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer feed.Close()
	parked := make(chan struct{}, 1)
	d.parkHook = func() {
		select {
		case parked <- struct{}{}:
		default:
		}
	}
	sock := d.SocketPath()
	samples := make([]time.Duration, 0, 1024)
	for b.Loop() {
		d.st.mu.Lock()
		gen := d.st.gen
		d.st.mu.Unlock()
		answered := make(chan time.Time, 1)
		go func() {
			mustCall(b, sock, map[string]any{"type": "WAIT", "after_gen": gen})
			answered <- time.Now()
		}()
		select {
		case <-parked:
		case <-answered:
			continue // output of the previous round arrived late: not a sample
		}
		t0 := time.Now()
		feed.Write([]byte("x\n"))
		samples = append(samples, (<-answered).Sub(t0))
	}
	reportPercentiles(b, samples)
}
