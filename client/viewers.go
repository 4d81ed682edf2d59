package client

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Viewers of a persistent terminal: Attach with AttachOptions{View: true}
// receives the terminal's output, from its own offset and within its own
// credit window, without holding it. The holder's keys, size and credit
// are untouched by it; a viewer that falls behind the server's journal is
// skipped forward: Read returns the server's repaint of the screen where
// the lost bytes would have been, and Offset jumps past them (as after a
// reconnect that lost bytes). Lost says how many were lost in all.

// ErrViewing is wrapped by the error of Write, Resize, Close and HandOver
// on a terminal this connection only views (the server would refuse them).
var ErrViewing = errors.New("the terminal is only viewed by this connection")

// AttachOptions are Attach's options.
type AttachOptions struct {
	// View attaches as a viewer ("mode":"view"): the output only. The
	// holder may hand the terminal over to it later (HandOver); an
	// Attach without View takes it over.
	View bool
}

// viewState is a terminal's share of viewing, under Terminal.mu.
type viewState struct {
	viewing bool   // this connection views the terminal, not holds it
	number  uint64 // its viewer number on the server
	lost    uint64 // bytes skipped since it attached
}

// Viewing reports whether this connection only views t (it attached with
// View, and the terminal was not handed over to it since).
func (t *Terminal) Viewing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view.viewing
}

// ViewerNumber is t's viewer number on the server (what the holder's
// HandOver names), 0 if it never was a viewer. A reconnect's ATTACH gives
// a viewer a new one.
func (t *Terminal) ViewerNumber() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view.number
}

// Lost is how many of the terminal's bytes this connection was skipped
// past since Attach: those of the Attach itself (Replay), those a
// reconnect found gone (EventLost) and, for a viewer, those it fell
// behind by. A SNAPSHOT stood in for each gap.
func (t *Terminal) Lost() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view.lost
}

// HandOver gives the terminal, which this connection holds, to the viewer
// numbered viewer (on any connection): it carries on as the holder from
// its own offset. HandOver returns once the server answered: nil when it
// handed the terminal over (t has then finished with an error wrapping
// ErrDetached), a *ServerError when it refused (a number that is not one
// of the terminal's viewers; nothing changes then), or an error when no
// answer came within DefaultOpenTimeout. On a reconnecting client it
// waits for no reconnect: while the connection is down, or when the drop
// takes its answer away, it fails with an error wrapping ErrDisconnected
// (and, while down, sends nothing); in the latter case t ends with
// ErrDetached at the reconnect if the server had handed it over. On a plain sidecar's terminal it
// fails at once, as Detach does (errors.ErrUnsupported).
func (t *Terminal) HandOver(viewer uint64) error {
	if err := t.refuseViewing("hand over"); err != nil {
		return err
	}
	select {
	case <-t.done:
		// Not this connection's any more: nothing to give.
		_, err := t.Wait()
		if err == nil {
			err = errors.New("the terminal has exited")
		}
		return fmt.Errorf("terminal %q: hand over to viewer %d: %w", t.id, viewer, err)
	default:
	}
	if err := t.refuseNotPersistent(); err != nil {
		return fmt.Errorf("terminal %q: hand over to viewer %d: %w", t.id, viewer, err)
	}
	wait := make(chan error, 1)
	t.mu.Lock()
	if t.handover != nil {
		t.mu.Unlock()
		return fmt.Errorf("terminal %q: hand over to viewer %d: another hand-over waits for its answer", t.id, viewer)
	}
	t.handover = wait
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		if t.handover == wait {
			t.handover = nil
		}
		t.mu.Unlock()
	}()
	body := proto.Marshal(struct {
		TerminalID string `json:"terminalId"`
		To         uint64 `json:"to"`
	}{t.id, viewer})
	frame := proto.AppendFrame(nil, proto.TypeDetach, body)
	// Not queued while a reconnecting client is down: the wait for the
	// answer would give up before the reconnect, and the queued DETACH
	// would then hand the terminal over after HandOver said it had not.
	s, err := t.c.sendNow(frame)
	if err != nil {
		return fmt.Errorf("terminal %q: hand over to viewer %d: %w", t.id, viewer, err)
	}
	timer := time.NewTimer(DefaultOpenTimeout)
	defer timer.Stop()
	select {
	case err := <-wait:
		return err
	case <-s.Done():
		if t.c.rc != nil {
			// The terminal goes on until the reattach: if the server
			// handed it over before the drop, the reattach is refused
			// and t ends with ErrDetached (a server without holder
			// generations takes it back instead).
			return fmt.Errorf("terminal %q: hand over to viewer %d: %w: the connection dropped before the answer", t.id, viewer, ErrDisconnected)
		}
		return t.handedOver(viewer)
	case <-t.done:
		return t.handedOver(viewer)
	case <-timer.C:
		return fmt.Errorf("terminal %q: hand over to viewer %d: no answer from the server within %v", t.id, viewer, DefaultOpenTimeout)
	}
}

// handedOver is HandOver's answer once t has finished while it waited:
// nil if the server detached it (handing it over), otherwise why it ended.
func (t *Terminal) handedOver(viewer uint64) error {
	<-t.done
	_, err := t.Wait()
	if errors.Is(err, ErrDetached) {
		return nil
	}
	if err == nil {
		err = errors.New("the terminal exited before the server handed it over")
	}
	return fmt.Errorf("terminal %q: hand over to viewer %d: %w", t.id, viewer, err)
}

// handOverRefused takes an ERROR about t that refuses the DETACH of a
// HandOver waiting for its answer; it reports whether it was one. Other
// ERRORs about a live terminal are an earlier sidecar's dropped input.
func (t *Terminal) handOverRefused(msg string) bool {
	if !strings.HasPrefix(msg, "DETACH refused") {
		return false
	}
	t.mu.Lock()
	wait := t.handover
	t.handover = nil
	t.mu.Unlock()
	if wait == nil {
		return false
	}
	wait <- &ServerError{Request: proto.TypeDetach, Message: msg}
	return true
}

// refuseViewing is the error of an operation only a holder may do, when
// t is viewed.
func (t *Terminal) refuseViewing(op string) error {
	t.mu.Lock()
	viewing := t.view.viewing
	t.mu.Unlock()
	if viewing {
		return fmt.Errorf("terminal %q: %s: %w", t.id, op, ErrViewing)
	}
	return nil
}

// attachMode is the mode a (re)ATTACH of t asks for.
func (t *Terminal) attachMode() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.view.viewing {
		return proto.AttachView
	}
	return ""
}

// viewAttached records how an ATTACH of t was answered.
func (t *Terminal) viewAttached(a proto.Attached) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.view.lost += a.Lost
	if a.HoldGen != 0 {
		// Held: a holder's ATTACHED, or a hand-over's "hold".
		t.holdGen = a.HoldGen
	}
	switch a.Mode {
	case proto.AttachView:
		t.view.viewing, t.view.number = true, a.Viewer
	default:
		t.view.viewing = false
	}
}

// liveAttached handles an ATTACHED for a terminal that is already live:
// the holder handed it over to this viewer (mode "hold"). Its lost bytes,
// if any, are repainted by the SNAPSHOT that follows.
func (c *Client) liveAttached(a proto.Attached) bool {
	c.mu.Lock()
	t := c.live[a.TerminalID]
	c.mu.Unlock()
	if t == nil {
		return false
	}
	t.viewAttached(a)
	return true
}

// liveSnapshot handles a SNAPSHOT for a live terminal: a viewer that fell
// out of the journal, or one handed the terminal after it had. The
// repaint goes into the stream where the lost bytes would have been.
func (c *Client) liveSnapshot(s proto.Snapshot) bool {
	c.mu.Lock()
	t := c.live[s.TerminalID]
	c.mu.Unlock()
	if t == nil {
		return false
	}
	if s.Lost > 0 {
		t.mu.Lock()
		t.view.lost += s.Lost
		t.mu.Unlock()
	}
	t.win.resync([]byte(s.Data), s.Offset)
	return true
}
