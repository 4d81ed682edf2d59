package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Stream is the frame level of a connection to a sidecar: it writes encoded
// frames to the sidecar and hands every frame the sidecar writes to a
// handler, in order, from one reader goroutine. Client is built on it. A
// host that wants the frames themselves (a test checking what is on the
// wire, a benchmark counting bytes) uses a Stream directly, so that every
// Go host in this module decodes, writes and ends its stream the same way.
type Stream struct {
	cmd *exec.Cmd     // nil for NewStream
	out io.ReadCloser // the sidecar's stdout pipe; nil for NewStream

	// wlock is held (a token in it) by whoever writes to w, so that
	// frames are written whole and one at a time. A channel rather than a
	// mutex: a sender can give up waiting for it (a context ends, a close
	// must not wait behind a write the sidecar does not read).
	wlock chan struct{}
	w     io.WriteCloser
	r     io.Reader // what readLoop reads (for NewStream: the caller's)

	emu  sync.Mutex
	werr error // sticky: once set, every Send returns it

	readDone chan struct{} // closed once the reader stopped
	readErr  error         // why: nil at a clean end of the stream
	done     chan struct{} // closed once the reader stopped and the process (if any) was reaped
	waitErr  error         // the process's exit, as exec.Cmd.Wait reports it

	lv *liveness // a reconnecting Client's keepalive state for this connection

	// heard is set once the first byte came from a process we started:
	// a handshake that timed out can then tell a transport that never
	// got through (ssh still connecting) from a sidecar that talks but
	// did not answer.
	heard atomic.Bool
	// frames counts the frames read: a sign of life (Client.Close).
	frames atomic.Uint64
}

// heardReader sets its flag once a read returned bytes.
type heardReader struct {
	r     io.Reader
	heard *atomic.Bool
}

func (h *heardReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 && !h.heard.Load() {
		h.heard.Store(true)
	}
	return n, err
}

// StreamOptions configure a Stream.
type StreamOptions struct {
	// Handle is called for every frame the sidecar writes, in order, from
	// the stream's one reader goroutine; nil drops them. An error ends the
	// stream as a corrupt one would (see KeepOnError).
	Handle func(proto.Frame) error
	// ReuseBodies hands Handle bodies that point into the reader's own
	// buffers, valid only until Handle returns (proto.Reader.ReuseBuffer):
	// a handler that consumes each frame at once saves an allocation, and
	// for frames that fit the read buffer a copy, of every frame.
	ReuseBodies bool
	// ReadBuffer is how many bytes the reader buffers; 0, or less than
	// proto's own 64 KiB, keeps proto's. With ReuseBodies, frames up to
	// this size are handed out in place.
	ReadBuffer int
	// KeepOnError leaves the sidecar alone when reading fails: its stdin
	// stays open and a process we started keeps running. By default a
	// stream that cannot be read any more is abandoned the way a host must
	// abandon a sidecar it cannot understand: later sends fail, its stdin
	// is closed and a process we started is killed. Tests that watch how
	// the sidecar itself reacts to a host that stops reading set it.
	KeepOnError bool
	// CheckData, if set, is called for every data frame once its header
	// and terminal id arrived, before its payload is read
	// (proto.Reader.CheckData): an error ends the stream as a handler's
	// would, without buffering the frame. The Client refuses OUTPUT
	// beyond the credit it granted here.
	CheckData func(t proto.Type, id string, n int) error
}

// StartStream starts cmd, whose Stdin and Stdout must be unset, and speaks
// the frame protocol over its stdin and stdout. The process is reaped once
// its stdout has ended; Done is closed then.
func StartStream(cmd *exec.Cmd, opts StreamOptions) (*Stream, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("sidecar stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sidecar stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	s := newStream(stdin)
	s.cmd, s.out = cmd, stdout
	go s.readLoop(&heardReader{r: stdout, heard: &s.heard}, opts)
	return s, nil
}

// NewStream speaks the frame protocol over an existing pair of streams, for
// a sidecar this program did not start itself (`ssh host ptyplex-sidecar`,
// or one running in this process). w's Close may be called while a Write
// to it is blocked, and should make that Write return (as os.File's and
// net.Conn's do): that is how CloseInput ends a write the sidecar does not
// read.
func NewStream(r io.Reader, w io.WriteCloser, opts StreamOptions) *Stream {
	s := newStream(w)
	s.r = r
	go s.readLoop(r, opts)
	return s
}

// halfClosing is a connection whose Close, as the end of the sidecar's
// input, shuts down its writing half only (Connect): the peer still
// sends what it has queued (the EXITs of a plain sidecar) and then closes
// the connection, a clean end of the stream, where closing it whole ended
// our reading with "use of closed network connection", which took the
// sidecar for gone. readLoop closes it whole once reading has stopped.
type halfClosing struct {
	conn interface {
		io.WriteCloser
		CloseWrite() error
	}
}

func (h halfClosing) Write(p []byte) (int, error) { return h.conn.Write(p) }
func (h halfClosing) Close() error                { return h.conn.CloseWrite() }

// closeWhole closes the connection, both halves.
func (h halfClosing) closeWhole() error { return h.conn.Close() }

// abort ends a stream whose other side does not end it: a process we
// started is killed; for NewStream, w is closed whole and r, if it can be.
func (s *Stream) abort() {
	if s.cmd != nil {
		s.Kill()
		return
	}
	if h, ok := s.w.(halfClosing); ok {
		h.closeWhole()
	} else {
		s.w.Close()
	}
	if c, ok := s.r.(io.Closer); ok {
		c.Close()
	}
}

func newStream(w io.WriteCloser) *Stream {
	return &Stream{w: w, wlock: make(chan struct{}, 1), readDone: make(chan struct{}), done: make(chan struct{})}
}

// lock takes the right to write, or gives up when ctx ends.
func (s *Stream) lock(ctx context.Context) error {
	select {
	case s.wlock <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.wlock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Stream) unlock() { <-s.wlock }

// sendErr returns the sticky error, if any.
func (s *Stream) sendErr() error {
	s.emu.Lock()
	defer s.emu.Unlock()
	return s.werr
}

// fail sets the sticky error unless one is set, and returns the one set.
func (s *Stream) fail(err error) error {
	s.emu.Lock()
	defer s.emu.Unlock()
	if s.werr == nil {
		s.werr = err
	}
	return s.werr
}

// writeCloseBound is how long a close waits for a write in progress to end
// before it closes the pipe under it: a sidecar that stopped reading its
// input (PROTOCOL.md: a paste into a child that does not read) would
// otherwise keep it waiting for as long as that lasts.
const writeCloseBound = time.Second

// closeWriter closes w once any write in progress ended, or after
// writeCloseBound regardless: the write then fails, and the other side sees
// its input end inside a frame, as from a host that died.
// It reports whether it had to.
func (s *Stream) closeWriter() (forced bool, err error) {
	return s.closeWriterWithin(writeCloseBound)
}

// closeWriterWithin is closeWriter with the wait for a write in progress
// bounded by d.
func (s *Stream) closeWriterWithin(d time.Duration) (forced bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if s.lock(ctx) == nil {
		defer s.unlock()
	} else {
		forced = true
		if h, ok := s.w.(halfClosing); ok {
			// Shutting down a socket's writing half need not end a
			// write blocked on it; closing it whole does.
			return forced, h.closeWhole()
		}
	}
	return forced, s.w.Close()
}

// readLoop is the stream's only reader. A stream is not resynchronised
// after a decoding error: nothing after it can be trusted.
func (s *Stream) readLoop(r io.Reader, opts StreamOptions) {
	defer close(s.done)
	if opts.ReadBuffer > 0 {
		// proto's reader adopts a bufio.Reader at least as large as its
		// own buffer instead of wrapping it in another.
		r = bufio.NewReaderSize(r, opts.ReadBuffer)
	}
	fr := proto.NewReader(r)
	if opts.ReuseBodies {
		fr.ReuseBuffer()
	}
	if opts.CheckData != nil {
		fr.CheckData(opts.CheckData)
	}
	var err error
	for {
		var f proto.Frame
		if f, err = fr.ReadFrame(); err != nil {
			break
		}
		s.frames.Add(1)
		if opts.Handle != nil {
			if err = opts.Handle(f); err != nil {
				break
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	if err != nil && !opts.KeepOnError {
		s.abandon(err)
	}
	if h, ok := s.w.(halfClosing); ok {
		// Nothing more comes: the descriptor is of no more use. (Were a
		// write blocked, this would end it too.)
		h.closeWhole()
	}
	s.readErr = err
	close(s.readDone)
	if s.cmd != nil {
		s.waitErr = s.cmd.Wait()
	}
}

// abandon fails every later send with cause, closes the pipe to the
// sidecar and kills a process we started. The cause is recorded before the
// pipe is closed, so that a writer failing on the closed pipe reports it
// rather than "file already closed".
func (s *Stream) abandon(cause error) {
	s.fail(fmt.Errorf("%w: %w", ErrSidecarGone, cause))
	s.closeWriter()
	s.Kill()
}

// exitReportWait bounds how long a failed write waits for the sidecar's
// exit, to report that instead of the broken pipe.
const exitReportWait = time.Second

// exited reports whether a started sidecar has exited (and been reaped)
// within d.
func (s *Stream) exited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-t.C:
		return false
	}
}

// Send writes encoded frames (one or more, or any bytes at all: nothing is
// checked, so tests can send malformed streams). Once a write has failed,
// or CloseInput was called, every Send returns an error wrapping
// ErrSidecarGone.
func (s *Stream) Send(frames []byte) error { return s.SendContext(context.Background(), frames) }

// SendContext is Send that gives up, with an error wrapping ctx.Err(), if
// ctx has ended or ends while it waits for another sender's write: a
// sidecar that does not read its input for a while (PROTOCOL.md, INPUT)
// keeps every sender behind that write waiting. A write already begun is
// not cut short.
func (s *Stream) SendContext(ctx context.Context, frames []byte) error {
	if err := s.sendErr(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		// A request whose caller gave up already must not reach the
		// sidecar: a STOP or REVIVE acts even if nobody waits for it.
		return fmt.Errorf("not sent to the sidecar: %w", err)
	}
	if err := s.lock(ctx); err != nil {
		return fmt.Errorf("waiting to write to the sidecar: %w", err)
	}
	defer s.unlock()
	if err := s.sendErr(); err != nil {
		return err
	}
	if _, err := s.w.Write(frames); err != nil {
		if err := s.sendErr(); err != nil {
			// Closed under the write by CloseInput or abandon, which
			// say why.
			return err
		}
		if s.cmd != nil && s.exited(exitReportWait) {
			// The pipe broke or was closed (by exec.Cmd.Wait) because
			// the sidecar has exited, and its exit says more than the
			// pipe.
			how := "with status 0"
			if s.waitErr != nil {
				how = s.waitErr.Error()
			}
			return s.fail(fmt.Errorf("%w: it exited (%s)", ErrSidecarGone, how))
		}
		return s.fail(fmt.Errorf("%w: writing to the sidecar: %v", ErrSidecarGone, err))
	}
	return nil
}

// SendJSON writes one control frame with v, encoded as proto does, as its
// body.
func (s *Stream) SendJSON(typ proto.Type, v any) error {
	return s.Send(proto.AppendFrame(nil, typ, proto.Marshal(v)))
}

// CloseInput closes the sidecar's stdin, which asks it to shut down; later
// sends fail with an error wrapping ErrSidecarGone and ErrClientClosed.
//
// A write in progress is given a second to end; one still blocked then
// (the sidecar does not read its input) fails, the pipe closed under it.
func (s *Stream) CloseInput() error {
	_, err := s.closeInput()
	return err
}

// closeInput is CloseInput that also reports whether a blocked write had
// to be cut short.
func (s *Stream) closeInput() (forced bool, err error) {
	return s.closeInputWithin(writeCloseBound)
}

// closeInputWithin is closeInput with the wait for a write in progress
// bounded by d (Close, which knows already that the write is hung).
func (s *Stream) closeInputWithin(d time.Duration) (forced bool, err error) {
	s.fail(fmt.Errorf("%w: %w", ErrSidecarGone, ErrClientClosed))
	forced, err = s.closeWriterWithin(d)
	if err != nil {
		return forced, fmt.Errorf("closing the sidecar's stdin: %w", err)
	}
	return forced, nil
}

// CloseOutput closes our end of a started sidecar's stdout, as a host that
// stops reading does: the sidecar's writes then fail, and so does the
// reader here. It does nothing for NewStream.
func (s *Stream) CloseOutput() error {
	if s.out == nil {
		return nil
	}
	return s.out.Close()
}

// Kill kills a sidecar process we started (nothing for NewStream).
func (s *Stream) Kill() error {
	if s.cmd == nil {
		return nil
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the sidecar: %w", err)
	}
	return nil
}

// Process returns the sidecar process we started, or nil for NewStream.
func (s *Stream) Process() *os.Process {
	if s.cmd == nil {
		return nil
	}
	return s.cmd.Process
}

// ReadDone is closed once the reader has stopped: every frame the sidecar
// wrote has been handled. A started process may still be running.
func (s *Stream) ReadDone() <-chan struct{} { return s.readDone }

// ReadErr says why reading stopped: nil at a clean end of the stream
// (between two frames), otherwise the decoding, handler or read error.
// Valid once ReadDone is closed.
func (s *Stream) ReadErr() error {
	<-s.readDone
	return s.readErr
}

// Done is closed once reading has stopped and a process we started has
// been reaped.
func (s *Stream) Done() <-chan struct{} { return s.done }

// WaitErr returns a started process's end as exec.Cmd.Wait reports it (nil
// for exit status 0, and always for NewStream). It waits for Done.
func (s *Stream) WaitErr() error {
	<-s.done
	return s.waitErr
}
