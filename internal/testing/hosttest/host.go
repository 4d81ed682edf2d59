//go:build unix

package hosttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
)

// Timeout is the default deadline for waiting on the sidecar. It is
// generous because CI machines are small and busy; waits end as soon as
// their event happens.
const Timeout = 15 * time.Second

// Host is a test host speaking the frame protocol to a real sidecar. It is
// built on the client package's frame level (client.Stream), so that it
// decodes and writes frames exactly as the Go client does; what it adds is
// a record of every frame, waits on that record, and the sidecar's stderr.
type Host struct {
	t     testing.TB
	Cmd   *exec.Cmd
	s     *client.Stream
	errMu sync.Mutex
	errb  bytes.Buffer
	errCh chan struct{} // closed and replaced on every write to stderr

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every new frame
	frames  []proto.Frame
	outputs map[string]*bytes.Buffer
	eof     error // set when the reader stops: io.EOF or the decoding error
}

// Start runs the sidecar binary at path with args and starts reading its
// frames. The process is killed at the end of the test if still running.
func Start(t testing.TB, path string, args ...string) *Host {
	t.Helper()
	return StartCmd(t, exec.Command(path, args...))
}

// StartCmd is Start for a prepared command (e.g. one wrapped to start with
// ignored signals). Stdin, Stdout and Stderr must be unset.
func StartCmd(t testing.TB, cmd *exec.Cmd) *Host {
	t.Helper()
	h := &Host{t: t, Cmd: cmd, changed: make(chan struct{}), outputs: map[string]*bytes.Buffer{},
		errCh: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &h.errMu, w: &h.errb, changed: &h.errCh, wrote: h.notify}
	var err error
	// KeepOnError: what the sidecar does when its host stops reading is
	// itself under test, so a failed read here must not end it.
	h.s, err = client.StartStream(cmd, client.StreamOptions{Handle: h.record, KeepOnError: true})
	if err != nil {
		t.Fatalf("start sidecar: %v", err)
	}
	go func() {
		<-h.s.ReadDone()
		eof := h.s.ReadErr()
		if eof == nil {
			eof = io.EOF
		}
		h.mu.Lock()
		h.eof = eof
		h.notifyLocked()
		h.mu.Unlock()
	}()
	t.Cleanup(func() {
		select {
		case <-h.s.Done():
		default:
			h.s.Kill()
			h.s.CloseOutput()
			<-h.s.Done()
		}
		if t.Failed() {
			t.Logf("sidecar stderr:\n%s", h.Stderr())
		}
	})
	return h
}

// lockedWriter collects stderr; wrote wakes the waits of Until, so that a
// condition on Stderr is re-checked as soon as a line arrives.
type lockedWriter struct {
	mu      *sync.Mutex
	w       io.Writer
	changed *chan struct{} // closed and replaced after each write, under mu
	wrote   func()         // called after each write, outside mu
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	if l.changed != nil {
		close(*l.changed)
		*l.changed = make(chan struct{})
	}
	l.mu.Unlock()
	l.wrote()
	return n, err
}

// notify wakes everyone waiting for a change.
func (h *Host) notify() {
	h.mu.Lock()
	h.notifyLocked()
	h.mu.Unlock()
}

func (h *Host) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// record keeps one frame from the sidecar (the stream's handler).
func (h *Host) record(f proto.Frame) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frames = append(h.frames, f)
	if f.Type == proto.TypeOutput {
		if id, data, err := proto.ParseData(f.Body); err == nil {
			b := h.outputs[id]
			if b == nil {
				b = new(bytes.Buffer)
				h.outputs[id] = b
			}
			b.Write(data)
		}
	}
	h.notifyLocked()
	return nil
}

// Stderr returns what the sidecar wrote to stderr so far.
func (h *Host) Stderr() string {
	h.errMu.Lock()
	defer h.errMu.Unlock()
	return h.errb.String()
}

// WaitStderr waits until the sidecar's stderr matches re, waking on each
// write to it, and returns the first match's submatches.
func (h *Host) WaitStderr(re *regexp.Regexp) []string {
	h.t.Helper()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	for {
		h.errMu.Lock()
		text, changed := h.errb.String(), h.errCh
		h.errMu.Unlock()
		if m := re.FindStringSubmatch(text); m != nil {
			return m
		}
		select {
		case <-changed:
		case <-deadline.C:
			h.t.Fatalf("sidecar stderr never matched %s:\n%s", re, text)
		}
	}
}

// Send writes one raw frame.
func (h *Host) Send(t proto.Type, body []byte) error {
	return h.SendRaw(proto.AppendFrame(nil, t, body))
}

// SendRaw writes bytes as they are, for malformed-stream tests.
func (h *Host) SendRaw(b []byte) error { return h.s.Send(b) }

// SendJSON writes a control frame with v as its JSON body.
func (h *Host) SendJSON(t proto.Type, v any) {
	h.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.Send(t, b); err != nil {
		h.t.Fatalf("send %s: %v", t, err)
	}
}

// Open sends OPEN.
func (h *Host) Open(o proto.Open) { h.t.Helper(); h.SendJSON(proto.TypeOpen, o) }

// Input sends INPUT.
func (h *Host) Input(id string, data string) {
	h.t.Helper()
	if err := h.SendRaw(proto.AppendDataFrame(nil, proto.TypeInput, id, []byte(data))); err != nil {
		h.t.Fatalf("send INPUT: %v", err)
	}
}

// CloseStdin ends the host's side of the stream.
func (h *Host) CloseStdin() { h.s.CloseInput() }

// CloseStdout closes the host's end of the sidecar's stdout, as a host
// that stops reading does.
func (h *Host) CloseStdout() { h.s.CloseOutput() }

// Snapshot is a consistent view of everything received so far.
type Snapshot struct {
	Frames  []proto.Frame
	Outputs map[string][]byte
	EOF     error // non-nil once the sidecar's stdout ended
}

// Output returns the concatenated OUTPUT of one terminal.
func (s Snapshot) Output(id string) string { return string(s.Outputs[id]) }

// Controls returns the control frames (not OUTPUT) about id, in order, with
// their JSON bodies decoded into maps.
func (s Snapshot) Controls(id string) []Control {
	var cs []Control
	for _, f := range s.Frames {
		if f.Type == proto.TypeOutput {
			continue
		}
		var m map[string]any
		if json.Unmarshal(f.Body, &m) != nil || m["terminalId"] != id {
			continue
		}
		cs = append(cs, Control{Type: f.Type, Fields: m, Raw: string(f.Body)})
	}
	return cs
}

// Control is one decoded control frame.
type Control struct {
	Type   proto.Type
	Fields map[string]any
	Raw    string
}

func (h *Host) snapshot() (Snapshot, chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Shared, not copied: frames and output are only ever appended to
	// (never changed in place, never reset), so what a snapshot holds,
	// capped at its length, stays as it was. Copying them at every wake
	// made a wait on a multi-megabyte stream quadratic: 8 MiB echoed in
	// 4 KiB frames copied gigabytes, and under the race detector and a
	// busy machine the wait ran out before the bytes did.
	s := Snapshot{Frames: h.frames[:len(h.frames):len(h.frames)], Outputs: make(map[string][]byte, len(h.outputs)), EOF: h.eof}
	for id, b := range h.outputs {
		n := b.Len()
		s.Outputs[id] = b.Bytes()[:n:n]
	}
	return s, h.changed
}

// Now returns what has been received so far.
func (h *Host) Now() Snapshot { s, _ := h.snapshot(); return s }

// ErrTimeout is returned by Until when its deadline passes.
var ErrTimeout = errors.New("timed out")

// Until waits until cond holds for what was received, or d passes, or the
// stream ends without cond holding. It wakes on every frame; no polling.
func (h *Host) Until(d time.Duration, cond func(Snapshot) bool) (Snapshot, error) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s, changed := h.snapshot()
		if cond(s) {
			return s, nil
		}
		if s.EOF != nil {
			return s, fmt.Errorf("sidecar output ended (%v) before the condition held", s.EOF)
		}
		select {
		case <-changed:
		case <-deadline.C:
			return s, ErrTimeout
		}
	}
}

// MustUntil is Until that fails the test, describing what was awaited.
func (h *Host) MustUntil(what string, cond func(Snapshot) bool) Snapshot {
	h.t.Helper()
	s, err := h.Until(Timeout, cond)
	if err != nil {
		h.t.Fatalf("waiting for %s: %v\nframes so far:\n%s", what, err, Describe(s))
	}
	return s
}

// Describe renders received frames for failure messages.
func Describe(s Snapshot) string {
	var b strings.Builder
	frames := s.Frames
	if len(frames) > 40 {
		fmt.Fprintf(&b, "  (%d earlier frames)\n", len(frames)-40)
		frames = frames[len(frames)-40:]
	}
	for _, f := range frames {
		if f.Type == proto.TypeOutput {
			id, data, _ := proto.ParseData(f.Body)
			fmt.Fprintf(&b, "  OUTPUT %q %q\n", id, truncate(string(data), 80))
		} else {
			fmt.Fprintf(&b, "  %s %s\n", f.Type, f.Body)
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// WaitOutput waits until id's output contains sub.
func (h *Host) WaitOutput(id, sub string) Snapshot {
	h.t.Helper()
	return h.MustUntil(fmt.Sprintf("output %q on %q", sub, id), func(s Snapshot) bool {
		return strings.Contains(s.Output(id), sub)
	})
}

// WaitControl waits for a control frame of type t about id and returns it.
func (h *Host) WaitControl(t proto.Type, id string) Control {
	h.t.Helper()
	var c Control
	h.MustUntil(fmt.Sprintf("%s for %q", t, id), func(s Snapshot) bool {
		for _, x := range s.Controls(id) {
			if x.Type == t {
				c = x
				return true
			}
		}
		return false
	})
	return c
}

// WaitExit waits for the sidecar process to exit and returns its exit code.
func (h *Host) WaitExit(d time.Duration) (int, error) {
	select {
	case <-h.s.Done():
	case <-time.After(d):
		return -1, ErrTimeout
	}
	werr := h.s.WaitErr()
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, werr
}
