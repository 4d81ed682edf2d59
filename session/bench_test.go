//go:build unix

package session

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// benchDaemon runs a daemon in this process and stops it when b ends.
func benchDaemon(tb testing.TB, cfg Config) *Daemon {
	tb.Helper()
	cfg.SocketPath = filepath.Join(tb.TempDir(), "s")
	if cfg.Scrollback == 0 {
		cfg.Scrollback = DefaultScrollback
	}
	d, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	served := make(chan struct{})
	go func() { d.Serve(); close(served) }()
	tb.Cleanup(func() {
		wire.Call(d.SocketPath(), map[string]any{"type": "STOP"})
		<-served
	})
	return d
}

// untilState blocks, on the state's change channel, until pred holds.
func untilState(tb testing.TB, d *Daemon, pred func(st *state) bool) {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		d.st.mu.Lock()
		ok, changed := pred(d.st), d.st.changed
		d.st.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			tb.Fatal("timed out waiting for the screen")
		}
	}
}

func mustCall(tb testing.TB, sock string, req map[string]any) *wire.Response {
	r, err := wire.Call(sock, req)
	if err != nil || r.Status != "ok" {
		tb.Fatalf("%v: %v %+v", req, err, r)
	}
	return r
}

func BenchmarkOutput80x24(b *testing.B) {
	d := benchDaemon(b, Config{Command: []string{"sh", "-c",
		`i=0; while [ $i -lt 30 ]; do i=$((i+1)); printf '\033[1;3%dm%079d\033[0m\n' $((i%8)) $i; done; exec cat`}})
	untilState(b, d, func(st *state) bool { return strings.Contains(st.scr.Line(23, false), "30") })
	req := map[string]any{"type": "OUTPUT", "format": "ansi"}
	b.ResetTimer()
	for b.Loop() {
		mustCall(b, d.SocketPath(), req)
	}
}

func BenchmarkOutputScrollback10000(b *testing.B) {
	d := benchDaemon(b, Config{Command: []string{"sh", "-c", `seq 1 12000; exec cat`}})
	untilState(b, d, func(st *state) bool { return strings.Contains(st.scr.Line(23, false), "12000") })
	req := map[string]any{"type": "OUTPUT", "format": "ansi", "from": "-"}
	var n int
	for b.Loop() {
		r := mustCall(b, d.SocketPath(), req)
		n = len(r.Data)
	}
	b.ReportMetric(float64(n), "bytes/answer")
}

// BenchmarkInput is one keystroke's round trip: INPUT, then an activity
// WAIT that returns when the program's echo has reached the screen.
func BenchmarkInput(b *testing.B) {
	d := benchDaemon(b, Config{Command: []string{"sh", "-c", `stty raw -echo; echo ready; exec cat`}})
	untilState(b, d, func(st *state) bool { return strings.Contains(st.scr.Line(1, false), "ready") })
	sock := d.SocketPath()
	mustCall(b, sock, map[string]any{"type": "WAIT", "activity": true})
	in := map[string]any{"type": "INPUT", "data": "x"}
	wait := map[string]any{"type": "WAIT", "activity": true}
	samples := make([]time.Duration, 0, 1024)
	for b.Loop() {
		t0 := time.Now()
		mustCall(b, sock, in)
		mustCall(b, sock, wait)
		samples = append(samples, time.Since(t0))
	}
	reportPercentiles(b, samples)
}

// BenchmarkWaitWake measures how soon a pending activity WAIT answers once
// the program prints: the program is `cat` on a FIFO, written to only when
// the daemon reports the WAIT parked.
func BenchmarkWaitWake(b *testing.B) {
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
	wait := map[string]any{"type": "WAIT", "activity": true}
	samples := make([]time.Duration, 0, 1024)
	for b.Loop() {
		answered := make(chan time.Time, 1)
		go func() {
			mustCall(b, sock, wait)
			answered <- time.Now()
		}()
		select {
		case <-parked:
		case <-answered:
			// Output left over from the previous round (the PTY can hand
			// one write over in two reads) answered at once; not a sample.
			continue
		}
		t0 := time.Now()
		feed.Write([]byte("x\n"))
		samples = append(samples, (<-answered).Sub(t0))
	}
	reportPercentiles(b, samples)
}

func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	at := func(p float64) float64 {
		return float64(samples[int(p*float64(len(samples)-1))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
