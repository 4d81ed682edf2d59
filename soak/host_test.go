package soak

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// host is a lean frame host for soak tests: it hands every frame to a
// callback on its reader goroutine and keeps nothing itself, so it can
// carry hundreds of MiB. Its reader can be paused to play a stalled host.
type host struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	inMu  sync.Mutex
	mu    sync.Mutex
	held  chan struct{} // non-nil while paused: closed to resume
	ended chan error    // the reader's end: nil at a clean EOF
}

func startHost(t testing.TB, onFrame func(proto.Frame)) *host {
	t.Helper()
	h := &host{t: t, cmd: exec.Command(sidecarBin), ended: make(chan error, 1)}
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := proto.NewReader(bufio.NewReaderSize(out, 256<<10))
		r.ReuseBuffer()
		for {
			h.mu.Lock()
			held := h.held
			h.mu.Unlock()
			if held != nil {
				<-held
			}
			f, err := r.ReadFrame()
			if err == io.EOF {
				h.ended <- nil
				return
			}
			if err != nil {
				h.ended <- err
				return
			}
			onFrame(f)
		}
	}()
	t.Cleanup(func() {
		h.resume()
		h.cmd.Process.Kill()
		h.cmd.Wait()
	})
	return h
}

func (h *host) pid() int { return h.cmd.Process.Pid }

// pause stops reading the sidecar's stdout after the current frame.
func (h *host) pause() {
	h.mu.Lock()
	if h.held == nil {
		h.held = make(chan struct{})
	}
	h.mu.Unlock()
}

func (h *host) resume() {
	h.mu.Lock()
	if h.held != nil {
		close(h.held)
		h.held = nil
	}
	h.mu.Unlock()
}

func (h *host) send(b []byte) {
	h.t.Helper()
	h.inMu.Lock()
	defer h.inMu.Unlock()
	if _, err := h.in.Write(b); err != nil {
		h.t.Fatalf("writing to the sidecar: %v", err)
	}
}

func (h *host) open(id string, args ...string) {
	h.t.Helper()
	o := proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: args}
	h.send(proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(o)))
}

// stop closes stdin and waits for the sidecar to exit cleanly.
func (h *host) stop(d time.Duration) {
	h.t.Helper()
	h.in.Close()
	select {
	case err := <-h.ended:
		if err != nil {
			h.t.Fatalf("sidecar output: %v", err)
		}
	case <-time.After(d):
		h.t.Fatalf("sidecar did not finish its output within %v", d)
	}
	if err := h.cmd.Wait(); err != nil {
		h.t.Fatalf("sidecar: %v", err)
	}
}

// await waits for a value on ch or fails after d.
func await[T any](t testing.TB, ch <-chan T, d time.Duration, what string, args ...any) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, fmt.Sprintf(what, args...))
	}
	var zero T
	return zero
}
