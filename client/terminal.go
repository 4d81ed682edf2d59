package client

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/proto"
)

// maxInputChunk is the most one INPUT frame carries. Large writes are split
// so that one terminal's paste does not sit in front of every other frame
// as a single multi-megabyte write.
const maxInputChunk = 64 << 10

// inputChunk returns how many bytes of p the next INPUT frame carries: all
// of them up to maxInputChunk, and otherwise as many as end at a UTF-8
// character's start at or before that limit, so that no character is cut
// in two. A console that decodes each read on its own (Wine's conhost)
// turns each half of a cut character into U+FFFD. Bytes that are not
// UTF-8 (a run of more than three continuation bytes) are cut at the
// limit; a chunk is never empty.
func inputChunk(p []byte) int {
	end := maxInputChunk
	if len(p) <= end {
		return len(p)
	}
	for i := end; i > 0 && i > end-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			return i
		}
	}
	return end
}

var _ io.ReadWriteCloser = (*Terminal)(nil)

// ExitStatus is how a terminal's child ended.
type ExitStatus struct {
	// Code is the exit code, or 128 plus the signal number when a signal
	// killed the child (the shell convention: SIGKILL gives 137).
	Code int
	// Signal names the signal that killed the child ("SIGKILL"), or is
	// empty when it exited by itself.
	Signal string
}

func (s ExitStatus) String() string {
	if s.Signal != "" {
		return fmt.Sprintf("killed by %s (exit code %d)", s.Signal, s.Code)
	}
	return fmt.Sprintf("exit code %d", s.Code)
}

// Terminal is one child running in a PTY inside the sidecar. Read returns
// its output (io.EOF after it exited and everything was read), Write sends
// it input. It is safe for concurrent use, though concurrent Reads (or
// Writes) interleave arbitrarily, as with any stream.
type Terminal struct {
	c   *Client
	id  string
	pid int
	raw bool
	win *window

	done chan struct{} // closed when the terminal finished

	// The offsets (what Offset returns, and what a resume attaches at)
	// live in win, under its lock, with the bytes they count.
	attached proto.Attached // how an ATTACH began (persist.go)
	snapshot string         // its repaint, when bytes were lost

	// features are the sidecar's for this terminal (OPENED's, or the
	// server's for an attached one); set before the caller has t.
	features []string

	sigMu    sync.Mutex // one Signal sends at a time (signal.go)
	mu       sync.Mutex
	signals  []*signalWait // Signals waiting for their answers, in order
	view     viewState     // viewers.go
	closed   bool          // CLOSE was sent
	handover chan error    // a HandOver waiting for the server's answer
	inputErr error         // dropped INPUT, reported by the next Write
	status   ExitStatus
	err      error // why Wait fails, if it does

	// detaching (under mu): a DETACH (not a hand-over) was sent or
	// queued, and DETACHED has not come yet; a resume must not take t
	// back.
	detaching bool
	// holdGen (under mu) is the latest holder generation the server
	// gave this client for t (OPENED, ATTACHED), 0 if it gave none (a
	// server before them, or t only viewed). A resume sends it, so that
	// the server refuses to give t back if another connection took it
	// since (resume.go).
	holdGen uint64
}

func newTerminal(c *Client, id string, window int, raw bool) *Terminal {
	size := window
	if raw {
		size = 0
	}
	return &Terminal{c: c, id: id, raw: raw, win: newWindow(size), done: make(chan struct{})}
}

// ID returns the terminal's id on the wire.
func (t *Terminal) ID() string { return t.id }

// Pid returns the child's process id as the sidecar reported it (0 when
// unknown).
func (t *Terminal) Pid() int { return t.pid }

// Read reads output. It blocks until output arrives or the terminal ends;
// after the child exited and all output was read it returns io.EOF, and if
// the terminal ended otherwise it returns why instead: an error wrapping
// ErrSidecarGone when the sidecar died, ErrClientClosed when Close ended
// the connection first, ErrDetached when another connection took the
// terminal over. Reading is what grants the sidecar more credit.
func (t *Terminal) Read(p []byte) (int, error) {
	n, grant, epoch, err := t.win.readEpoch(p)
	if grant > 0 {
		t.c.grant(t, grant, epoch)
	}
	return n, err
}

// Write sends p to the child's PTY. It returns once the frames are handed
// to the sidecar, not when the child has read them. A large p goes out as
// several INPUT frames of at most 64 KiB, cut where a UTF-8 character
// begins, so that no character is split between two of them. A child
// that does not read makes Write block once 16 MiB are queued for it in
// the sidecar (the sidecar stops reading frames, PROTOCOL.md, INPUT);
// Close still ends it. To a sidecar whose HELLO announced the keepalive
// (a client that did not begin with HELLO asks once, when it first needs
// to know), the INPUT of every terminal on the connection goes out in
// pieces of 512 KiB all told, each once the sidecar has taken the one
// before (pace.go): a paste, into any terminal, then never hides from the
// sidecar the CREDIT that lets an echoing child go on. Small writes
// (keystrokes) are only counted: while a paste waits for the sidecar,
// other terminals' typing still goes out, and so do their CREDITs, even
// when that paste's child never reads; a large write to another terminal
// waits its turn. An ERROR
// about the live terminal (older sidecars sent one for input they
// dropped) is reported by the next Write as an *InputError.
//
// While a reconnecting client (Options.Reconnect) is disconnected, Write
// queues p, to be sent after the terminal was reattached, and returns at
// once; past ReconnectPolicy.QueueLimit it fails with an error wrapping
// ErrDisconnectedQueueFull.
func (t *Terminal) Write(p []byte) (int, error) {
	if err := t.refuseViewing("write"); err != nil {
		return 0, err
	}
	t.mu.Lock()
	if err := t.inputErr; err != nil {
		t.inputErr = nil
		t.mu.Unlock()
		return 0, err
	}
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return 0, fmt.Errorf("terminal %q: write: %w", t.id, ErrTerminalClosed)
	}
	select {
	case <-t.done:
		return 0, t.writeEnded()
	default:
	}
	written := 0
	for written < len(p) {
		if t.c.rc != nil {
			// Down (or gone): what is left of p queues whole, or fails.
			if queued, err := t.c.queueInput(t.id, p[written:]); queued {
				if err != nil {
					return written, fmt.Errorf("terminal %q: write: %w", t.id, err)
				}
				return len(p), nil
			}
		}
		chunk := p[written : written+inputChunk(p[written:])]
		if err := t.c.paceInput(t, len(chunk)); err != nil {
			return written, t.writeEnded()
		}
		if err := t.c.sendTerm(proto.AppendDataFrame(nil, proto.TypeInput, t.id, chunk), len(chunk)); err != nil {
			return written, fmt.Errorf("terminal %q: write: %w", t.id, err)
		}
		written += len(chunk)
	}
	return written, nil
}

// writeEnded is the error of a Write to a terminal that has finished.
func (t *Terminal) writeEnded() error {
	t.mu.Lock()
	err := t.err
	t.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return fmt.Errorf("terminal %q: write: terminal has exited", t.id)
}

// Resize changes the terminal's size. The sidecar applies it best effort
// and reports nothing back.
func (t *Terminal) Resize(cols, rows uint16) error {
	if err := t.refuseViewing("resize"); err != nil {
		return err
	}
	frame := proto.AppendFrame(nil, proto.TypeResize, proto.Marshal(proto.Resize{TerminalID: t.id, Cols: cols, Rows: rows}))
	if err := t.c.sendTerm(frame, len(frame)); err != nil {
		return fmt.Errorf("terminal %q: resize: %w", t.id, err)
	}
	return nil
}

// Close asks the sidecar to end the terminal: its process group gets
// SIGHUP, then SIGKILL after a grace period of a few seconds. Close does
// not wait; use Wait or Done. Output produced until the end stays readable
// (and is no longer throttled). Closing twice, or after the child exited,
// does nothing.
func (t *Terminal) Close() error {
	if err := t.refuseViewing("close"); err != nil {
		return err
	}
	t.mu.Lock()
	already := t.closed
	t.closed = true
	t.mu.Unlock()
	if already {
		return nil
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	// From the CLOSE on the sidecar reads the terminal unthrottled.
	t.win.lift()
	frame := proto.AppendFrame(nil, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: t.id}))
	sent := make(chan error, 1)
	go func() { sent <- t.c.sendClose(t, frame) }()
	wait := time.NewTimer(closeSendWait)
	defer wait.Stop()
	select {
	case err := <-sent:
		if err != nil {
			// Nothing went out (a reconnecting client's full queue,
			// or a sidecar gone): the terminal is as it was, so that
			// Write still works and another Close sends CLOSE.
			t.win.relimit()
			t.mu.Lock()
			t.closed = false
			t.mu.Unlock()
			return fmt.Errorf("terminal %q: close: %w", t.id, err)
		}
		return nil
	case <-wait.C:
		// The sidecar reads none of our frames: it waits for a child
		// to read the input queued for it (PROTOCOL.md, INPUT), maybe
		// this very one. The CLOSE goes out, or is read, when it reads
		// again; a local sidecar's child is hung up on directly
		// meanwhile, as the CLOSE would, so that such a wait can end.
		go t.hangUp(sent)
		return nil
	}
}

// closeSendWait is how long Close waits for its CLOSE to be written (and,
// with input out unconfirmed, read: sendClose) before it leaves that to a
// goroutine.
const closeSendWait = 200 * time.Millisecond

// hangUp does what a CLOSE does to the child of a local plain sidecar,
// for a CLOSE that cannot be written: SIGHUP to its process group now,
// SIGKILL after the sidecar's grace period, each unless the CLOSE was
// taken or the terminal ended first (then the sidecar holds or has reaped
// the child, and its pid is not ours to signal).
func (t *Terminal) hangUp(sent <-chan error) {
	if t.pid <= 0 || !t.c.plainLocal() {
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGKILL} {
		select {
		case <-sent:
			return
		case <-t.done:
			return
		default:
		}
		signalGroup(t.pid, sig)
		grace := time.NewTimer(closeGrace)
		select {
		case <-sent:
			// The CLOSE was taken during the grace period: the
			// sidecar ends the child now, after a grace of its own.
			grace.Stop()
			return
		case <-t.done:
			grace.Stop()
			return
		case <-grace.C:
		}
	}
}

// closeGrace is the sidecar's time between a CLOSE's SIGHUP and its
// SIGKILL (engine.CloseGrace).
const closeGrace = 3 * time.Second

// Done is closed when the terminal has finished: its EXIT arrived or the
// sidecar went away.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Wait blocks until the terminal finished and returns how the child ended.
// The error is non-nil when the status is unknown: ErrExitUnknown, or an
// error wrapping ErrSidecarGone when the sidecar died first.
func (t *Terminal) Wait() (ExitStatus, error) {
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.err
}

// Buffered returns how many output bytes are waiting to be read. For a
// terminal with a credit window it never exceeds the window.
func (t *Terminal) Buffered() int {
	n, _ := t.win.stats()
	return n
}

// finish ends the terminal; called once by the client's reader goroutine.
func (t *Terminal) finish(st ExitStatus, err error) {
	t.mu.Lock()
	t.status, t.err = st, err
	t.mu.Unlock()
	if err != nil && !errors.Is(err, ErrExitUnknown) {
		t.win.finish(err)
	} else {
		// The child exited (its status may be unknown, which is Wait's
		// to say): its output ends as output does.
		t.win.finish(io.EOF)
	}
	close(t.done)
}

// dropped records an ERROR frame about this live terminal (INPUT overflow).
func (t *Terminal) dropped(msg string) {
	t.mu.Lock()
	if t.inputErr == nil {
		t.inputErr = &InputError{TerminalID: t.id, Message: msg}
	}
	t.mu.Unlock()
}
