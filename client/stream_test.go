package client

import (
	"errors"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameLog collects what a Stream's handler was given, so that a test can
// wait for a frame without polling.
type frameLog struct {
	mu     sync.Mutex
	frames []proto.Frame
	change chan struct{}
}

func newFrameLog() *frameLog { return &frameLog{change: make(chan struct{})} }

func (l *frameLog) handle(f proto.Frame) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Copied: with ReuseBodies the body is only valid during the call.
	l.frames = append(l.frames, proto.Frame{Type: f.Type, Body: append([]byte(nil), f.Body...)})
	close(l.change)
	l.change = make(chan struct{})
	return nil
}

// waitFor waits until a frame of type typ arrived and returns the frames
// so far.
func (l *frameLog) waitFor(t *testing.T, typ proto.Type) []proto.Frame {
	t.Helper()
	deadline := time.NewTimer(waitBound)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		frames, change := append([]proto.Frame(nil), l.frames...), l.change
		l.mu.Unlock()
		for _, f := range frames {
			if f.Type == typ {
				return frames
			}
		}
		select {
		case <-change:
		case <-deadline.C:
			t.Fatalf("no %s frame in time; got %d frames", typ, len(frames))
		}
	}
}

func waitClosed(t *testing.T, what string, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(waitBound):
		t.Fatalf("%s: timed out", what)
	}
}

// TestStreamRunsATerminal drives the real sidecar at the frame level, with
// bodies reused: every frame arrives in order, and closing the input ends
// the stream cleanly and reaps the sidecar.
func TestStreamRunsATerminal(t *testing.T) {
	l := newFrameLog()
	s, err := StartStream(exec.Command(sidecarBin), StreamOptions{Handle: l.handle, ReuseBodies: true, ReadBuffer: 1 << 20})
	require.NoError(t, err)
	require.NoError(t, s.SendJSON(proto.TypeOpen, proto.Open{TerminalID: "s", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo stream-ok"}}))
	frames := l.waitFor(t, proto.TypeExit)
	require.Equal(t, proto.TypeOpened, frames[0].Type)
	require.Equal(t, proto.TypeExit, frames[len(frames)-1].Type)
	var out []byte
	for _, f := range frames {
		if f.Type == proto.TypeOutput {
			id, data, err := proto.ParseData(f.Body)
			require.NoError(t, err)
			require.Equal(t, "s", id)
			out = append(out, data...)
		}
	}
	assert.Contains(t, string(out), "stream-ok")

	require.NoError(t, s.CloseInput())
	waitClosed(t, "the end of the stream", s.Done())
	assert.NoError(t, s.ReadErr())
	assert.NoError(t, s.WaitErr())
	err = s.SendJSON(proto.TypeClose, proto.Close{TerminalID: "s"})
	assert.ErrorIs(t, err, ErrSidecarGone)
	assert.ErrorIs(t, err, ErrClientClosed)
}

// pipeEnds is a sidecar stand-in: the test writes what the "sidecar" says
// into toHost and reads what the host sent from fromHost.
type pipeEnds struct {
	toHost   *io.PipeWriter
	fromHost *io.PipeReader
	hostR    *io.PipeReader
	hostW    *io.PipeWriter
}

func newPipeEnds(t *testing.T) pipeEnds {
	hr, th := io.Pipe()
	fh, hw := io.Pipe()
	// Releases a stand-in still writing what nobody reads any more.
	t.Cleanup(func() { hr.Close(); fh.Close() })
	return pipeEnds{toHost: th, fromHost: fh, hostR: hr, hostW: hw}
}

// TestStreamAbandonsACorruptStream: a stream that stops making sense is
// not read further, its sends fail with the cause, and the pipe to the
// sidecar is closed.
func TestStreamAbandonsACorruptStream(t *testing.T) {
	p := newPipeEnds(t)
	l := newFrameLog()
	s := NewStream(p.hostR, p.hostW, StreamOptions{Handle: l.handle})
	go func() {
		p.toHost.Write(proto.AppendFrame(nil, proto.TypeOpened, []byte(`{"terminalId":"a","pid":1}`)))
		p.toHost.Write([]byte{0, 0, 0, 0, 0}) // a zero length: no frame has that
		p.toHost.Write(proto.AppendFrame(nil, proto.TypeExit, []byte(`{"terminalId":"a"}`)))
	}()
	waitClosed(t, "the end of the stream", s.Done())
	require.ErrorIs(t, s.ReadErr(), proto.ErrCorrupt)
	l.mu.Lock()
	assert.Len(t, l.frames, 1, "frames after the corruption were handled")
	l.mu.Unlock()
	err := s.Send(proto.AppendFrame(nil, proto.TypeClose, []byte(`{"terminalId":"a"}`)))
	assert.ErrorIs(t, err, ErrSidecarGone)
	assert.ErrorIs(t, err, proto.ErrCorrupt)
	_, err = p.fromHost.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the pipe to the sidecar is still open")
}

// TestStreamHandlerErrorEnds: a handler that rejects a frame ends the
// stream with its error; with KeepOnError the pipe to the sidecar stays
// open and usable.
func TestStreamHandlerErrorEnds(t *testing.T) {
	p := newPipeEnds(t)
	bad := errors.New("not a frame this host understands")
	s := NewStream(p.hostR, p.hostW, StreamOptions{Handle: func(proto.Frame) error { return bad }, KeepOnError: true})
	go p.toHost.Write(proto.AppendFrame(nil, proto.TypeOpened, []byte(`{}`)))
	waitClosed(t, "the end of reading", s.ReadDone())
	assert.ErrorIs(t, s.ReadErr(), bad)

	sent := make(chan error, 1)
	go func() { sent <- s.Send([]byte("still here")) }()
	got := make([]byte, len("still here"))
	_, err := io.ReadFull(p.fromHost, got)
	require.NoError(t, err)
	assert.Equal(t, "still here", string(got))
	require.NoError(t, <-sent)
}
