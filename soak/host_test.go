package soak

import (
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
)

// host is a lean frame host for soak tests, on the client package's frame
// level: it hands every frame to a callback on its reader goroutine and
// keeps nothing itself, so it can carry hundreds of MiB. Its reader can be
// paused to play a stalled host.
type host struct {
	t    testing.TB
	s    *client.Stream
	mu   sync.Mutex
	held chan struct{} // non-nil while paused: closed to resume
}

func startHost(t testing.TB, onFrame func(proto.Frame)) *host {
	t.Helper()
	h := &host{t: t}
	var err error
	h.s, err = client.StartStream(exec.Command(sidecarBin), client.StreamOptions{
		Handle: func(f proto.Frame) error {
			onFrame(f)
			h.waitIfPaused()
			return nil
		},
		ReuseBodies: true,
		ReadBuffer:  256 << 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.resume()
		h.s.Kill()
		<-h.s.Done()
	})
	return h
}

func (h *host) pid() int { return h.s.Process().Pid }

// waitIfPaused holds the reader, after the frame it just handed over,
// while the host is paused.
func (h *host) waitIfPaused() {
	h.mu.Lock()
	held := h.held
	h.mu.Unlock()
	if held != nil {
		<-held
	}
}

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
	if err := h.s.Send(b); err != nil {
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
	h.s.CloseInput()
	select {
	case <-h.s.ReadDone():
		if err := h.s.ReadErr(); err != nil {
			h.t.Fatalf("sidecar output: %v", err)
		}
	case <-time.After(d):
		h.t.Fatalf("sidecar did not finish its output within %v", d)
	}
	if err := h.s.WaitErr(); err != nil {
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
