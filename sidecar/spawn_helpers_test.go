package sidecar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// inproc is a host driving an in-process Sidecar through pipes, so that a
// test can reach its unexported seams (beforeSpawn, the input budget).
// Children are real processes in real PTYs. It reads and writes frames
// through client.Stream, as every Go host here does.
type inproc struct {
	t      *testing.T
	sc     *Sidecar
	s      *client.Stream
	out    *io.PipeWriter // the sidecar's stdout
	ran    chan error     // Run's result
	once   sync.Once
	runErr error

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every frame and log line
	frames  []proto.Frame
	eof     bool
	logb    bytes.Buffer
}

// startInproc runs a sidecar; hook, if set, becomes its beforeSpawn.
func startInproc(t *testing.T, hook func(id string)) *inproc {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &inproc{t: t, out: outW, ran: make(chan error, 1), changed: make(chan struct{})}
	h.sc = New(outW, Options{Log: log.New(logSink{h}, "", 0)})
	h.sc.beforeSpawn = hook
	go func() { h.ran <- h.sc.Run(inR) }()
	h.s = client.NewStream(outR, inW, client.StreamOptions{Handle: h.record})
	go func() {
		<-h.s.ReadDone()
		h.mu.Lock()
		h.eof = true
		h.notifyLocked()
		h.mu.Unlock()
	}()
	t.Cleanup(func() {
		h.s.CloseInput()
		h.wait()
		outR.Close()
		if t.Failed() {
			t.Logf("sidecar log:\n%s", h.log())
		}
	})
	return h
}

// record keeps one frame from the sidecar (the stream's handler).
func (h *inproc) record(f proto.Frame) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.frames = append(h.frames, f)
	h.notifyLocked()
	return nil
}

// wait returns Run's result once it returned (after the host closed its
// end or the sidecar stopped), failing the test if it never does.
func (h *inproc) wait() error {
	h.once.Do(func() {
		select {
		case h.runErr = <-h.ran:
		case <-time.After(30 * time.Second):
			h.t.Errorf("sidecar did not shut down")
		}
	})
	return h.runErr
}

// final ends the host's input, waits for Run to return and returns every
// frame the sidecar wrote, with Run's result.
func (h *inproc) final() ([]seen, error) {
	h.t.Helper()
	h.s.CloseInput()
	err := h.wait()
	h.out.Close() // everything was written: let the reader see the end
	for {
		frames, eof, _, changed := h.snapshot()
		if eof {
			return frames, err
		}
		<-changed
	}
}

type logSink struct{ h *inproc }

func (l logSink) Write(p []byte) (int, error) {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	l.h.logb.Write(p)
	l.h.notifyLocked()
	return len(p), nil
}

func (h *inproc) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *inproc) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logb.String()
}

func (h *inproc) send(typ proto.Type, body []byte) {
	h.t.Helper()
	require.NoError(h.t, h.s.Send(proto.AppendFrame(nil, typ, body)))
}

func (h *inproc) sendJSON(typ proto.Type, v any) { h.t.Helper(); h.send(typ, proto.Marshal(v)) }

func (h *inproc) input(id, data string) {
	h.t.Helper()
	require.NoError(h.t, h.s.Send(proto.AppendDataFrame(nil, proto.TypeInput, id, []byte(data))))
}

// sync returns once every frame sent before it was dispatched. It sends a
// frame of an unknown type (dropped by the dispatch loop) whose pipe write
// returns only once the loop read it, and the loop reads from a write only
// when it begins the next frame: after dispatching what came before.
func (h *inproc) sync() {
	h.t.Helper()
	h.send(0x7e, []byte("sync"))
}

// seen is one frame as a test looks at it.
type seen struct {
	typ    proto.Type
	id     string
	data   string         // OUTPUT
	fields map[string]any // control frames
}

func (h *inproc) snapshot() ([]seen, bool, string, chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]seen, 0, len(h.frames))
	for _, f := range h.frames {
		s := seen{typ: f.Type}
		if f.Type == proto.TypeOutput {
			id, data, _ := proto.ParseData(f.Body)
			s.id, s.data = id, string(data)
		} else {
			json.Unmarshal(f.Body, &s.fields)
			s.id, _ = s.fields["terminalId"].(string)
		}
		out = append(out, s)
	}
	return out, h.eof, h.logb.String(), h.changed
}

// until waits (on events, up to a generous deadline) for cond to hold.
func (h *inproc) until(what string, cond func(frames []seen, log string) bool) []seen {
	h.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		frames, eof, lg, changed := h.snapshot()
		if cond(frames, lg) {
			return frames
		}
		if eof {
			h.t.Fatalf("waiting for %s: output ended\n%s", what, describe(frames))
		}
		select {
		case <-changed:
		case <-deadline.C:
			h.t.Fatalf("waiting for %s: timed out\n%s", what, describe(frames))
		}
	}
}

func (h *inproc) control(typ proto.Type, id string) map[string]any {
	h.t.Helper()
	var got map[string]any
	h.until(fmt.Sprintf("%s for %q", typ, id), func(fs []seen, _ string) bool {
		for _, f := range fs {
			if f.typ == typ && f.id == id {
				got = f.fields
				return true
			}
		}
		return false
	})
	return got
}

func (h *inproc) output(id, sub string) {
	h.t.Helper()
	h.until(fmt.Sprintf("output %q on %q", sub, id), func(fs []seen, _ string) bool {
		return strings.Contains(outputOf(fs, id), sub)
	})
}

func outputOf(fs []seen, id string) string {
	var b strings.Builder
	for _, f := range fs {
		if f.typ == proto.TypeOutput && f.id == id {
			b.WriteString(f.data)
		}
	}
	return b.String()
}

// about returns the frame types about id, in order, OUTPUT included.
func about(fs []seen, id string) []proto.Type {
	var ts []proto.Type
	for _, f := range fs {
		if f.id == id {
			ts = append(ts, f.typ)
		}
	}
	return ts
}

func describe(fs []seen) string {
	var b strings.Builder
	for _, f := range fs {
		if f.typ == proto.TypeOutput {
			fmt.Fprintf(&b, "  OUTPUT %q %q\n", f.id, f.data)
		} else {
			fmt.Fprintf(&b, "  %s %v\n", f.typ, f.fields)
		}
	}
	return b.String()
}

// gate blocks the first spawn of each chosen id until released.
type gate struct {
	mu      sync.Mutex
	holds   map[string]chan struct{} // closed by release
	reached map[string]chan struct{} // closed when that spawn reached the gate
	used    map[string]bool          // that id's first spawn came by
}

func newGate(ids ...string) *gate {
	g := &gate{holds: map[string]chan struct{}{}, reached: map[string]chan struct{}{}, used: map[string]bool{}}
	for _, id := range ids {
		g.holds[id] = make(chan struct{})
		g.reached[id] = make(chan struct{})
	}
	return g
}

func (g *gate) hook(id string) {
	g.mu.Lock()
	hold, reached := g.holds[id], g.reached[id]
	first := !g.used[id]
	g.used[id] = true
	g.mu.Unlock()
	if hold == nil || !first {
		return
	}
	close(reached)
	<-hold
}

// waitReached waits until id's spawn is held at the gate.
func (g *gate) waitReached(t *testing.T, id string) {
	t.Helper()
	select {
	case <-g.reached[id]:
	case <-time.After(30 * time.Second):
		t.Fatalf("spawn of %q never began", id)
	}
}

func (g *gate) release(id string) { close(g.holds[id]) }

func openCmd(id string, cmd string, args ...string) proto.Open {
	return proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: cmd, Args: args}
}

func ptr[T any](v T) *T { return &v }
