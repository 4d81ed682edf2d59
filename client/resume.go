package client

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ptyplex/ptyplex/proto"
)

// Taking the terminals back after a redial: an ATTACH each at the offset
// already received, and their answers.

// resumeWait is one terminal's ATTACH after a reconnect.
type resumeWait struct {
	t    *Terminal
	lost uint64     // set from ATTACHED; SNAPSHOT then settles it
	done chan error // capacity 1
}

// resume sends, under io, an ATTACH for every live terminal and then
// starts the flush of the queued frames (startFlush). The server handles
// a connection's frames in order and ATTACH takes effect at once, so the
// queued INPUT that follows finds its terminal attached.
func (c *Client) resume(s *Stream, live []*Terminal) []*resumeWait {
	r := c.rc
	r.io.Lock()
	defer r.io.Unlock()
	waits := make([]*resumeWait, 0, len(live))
	live = slices.DeleteFunc(slices.Clone(live), (*Terminal).detachedByDrop)
	c.persist.mu.Lock()
	if c.persist.resuming == nil {
		c.persist.resuming = map[string]*resumeWait{}
	}
	for _, t := range live {
		w := &resumeWait{t: t, done: make(chan error, 1)}
		c.persist.resuming[t.id] = w
		waits = append(waits, w)
	}
	c.persist.mu.Unlock()
	for _, w := range waits {
		offset, credit := w.t.win.resetCredit()
		body := proto.Marshal(w.t.reattach(offset, credit))
		frames := proto.AppendFrame(nil, proto.TypeAttach, body)
		if w.t.closeAsked() {
			// The CLOSE may have died with the old connection (a
			// frame written as it dropped is lost with it), and
			// Wait would then wait for good. Another is harmless: a
			// terminal that is closing already ignores it.
			frames = proto.AppendFrame(frames, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: w.t.id}))
		}
		if s.Send(frames) != nil {
			// The new connection died already; the wait sees it.
			return waits
		}
	}
	r.down = false
	c.startFlush(s)
	return waits
}

// reattach is the ATTACH that takes t back after a reconnect: in the
// mode t had, and, when held, with "resume" set to the holder generation
// the server last gave for it, so that the server refuses it if another
// connection took t since. Without a generation (a server before them)
// there is no resume, and the ATTACH takes t back as it always did. A
// lost ATTACHED left holdGen as it was: the server accepts the older
// generation again, since resumes do not count against a resume.
func (t *Terminal) reattach(offset uint64, credit *uint64) proto.Attach {
	a := proto.Attach{TerminalID: t.id, Offset: offset, Credit: credit, Mode: t.attachMode()}
	t.mu.Lock()
	defer t.mu.Unlock()
	if a.Mode != proto.AttachView && t.holdGen != 0 {
		gen := t.holdGen
		a.Resume = &gen
	}
	return a
}

// heldAt records the holder generation an OPENED gave (0: none).
func (t *Terminal) heldAt(gen uint64) {
	if gen == 0 {
		return
	}
	t.mu.Lock()
	t.holdGen = gen
	t.mu.Unlock()
}

// closeAsked reports whether the host closed t (a CLOSE was sent or
// queued).
func (t *Terminal) closeAsked() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// detachedByDrop ends t if the host detached it and the connection
// dropped before DETACHED came: the drop let it go as the DETACH would
// have (a DETACH queued meanwhile finds it unheld), and reattaching it
// would take it back, holding it for good with nobody asking. It reports
// whether it ended t.
func (t *Terminal) detachedByDrop() bool {
	t.mu.Lock()
	detaching := t.detaching
	t.mu.Unlock()
	if !detaching {
		return false
	}
	c := t.c
	c.mu.Lock()
	if c.live[t.id] != t {
		c.mu.Unlock()
		return false
	}
	delete(c.live, t.id)
	c.mu.Unlock()
	t.finish(ExitStatus{Code: -1}, fmt.Errorf("terminal %q: %w: detached as asked (the connection dropped before the server confirmed)", t.id, ErrDetached))
	return true
}

func (c *Client) forgetResumes(waits []*resumeWait) {
	c.persist.mu.Lock()
	defer c.persist.mu.Unlock()
	for _, w := range waits {
		if c.persist.resuming[w.t.id] == w {
			delete(c.persist.resuming, w.t.id)
		}
	}
}

// resumeAttached handles ATTACHED for a resume; it reports whether it was
// one.
func (c *Client) resumeAttached(a proto.Attached) bool {
	c.persist.mu.Lock()
	w := c.persist.resuming[a.TerminalID]
	if w == nil {
		c.persist.mu.Unlock()
		return false
	}
	if a.Lost == 0 {
		delete(c.persist.resuming, a.TerminalID)
	} else {
		// SNAPSHOT follows, before any OUTPUT.
		w.lost = a.Lost
	}
	c.persist.mu.Unlock()
	// Answered as any ATTACH: a viewer has a new number now (the one a
	// holder's HandOver must name), and what was lost counts in Lost.
	w.t.viewAttached(a)
	if a.Lost == 0 {
		w.done <- nil
	}
	return true
}

// resumeSnapshot handles SNAPSHOT for a resume: the repaint goes into the
// terminal's stream, where the lost bytes would have been.
func (c *Client) resumeSnapshot(sn proto.Snapshot) bool {
	c.persist.mu.Lock()
	defer c.persist.mu.Unlock()
	w := c.persist.resuming[sn.TerminalID]
	if w == nil {
		return false
	}
	delete(c.persist.resuming, sn.TerminalID)
	w.t.win.resync([]byte(sn.Data), sn.Offset)
	w.done <- nil
	return true
}

// resumeRefused handles an ERROR about a terminal being resumed. Either
// another connection took the terminal over while this one was down (the
// server refuses the resume): the terminal ends as one taken over while
// connected does, with ErrDetached, its program running on under the
// other holder (or detached, if that one let it go since). Or the server
// no longer has it (it exited and was forgotten, or the server was
// restarted): the terminal ends with the server's reason. Either way it
// is no longer this client's, and no resume takes it again.
func (c *Client) resumeRefused(m proto.Error) bool {
	c.persist.mu.Lock()
	w := c.persist.resuming[m.TerminalID]
	if w != nil {
		delete(c.persist.resuming, m.TerminalID)
	}
	c.persist.mu.Unlock()
	if w == nil {
		return false
	}
	err := fmt.Errorf("terminal %q: %w: reattaching after a reconnect: %s", m.TerminalID, ErrSidecarGone, m.Message)
	if takenOverSince(m) {
		err = fmt.Errorf("terminal %q: %w: taken over by another connection while disconnected (%s)", m.TerminalID, ErrDetached, m.Message)
	}
	c.mu.Lock()
	if c.live[m.TerminalID] == w.t {
		delete(c.live, m.TerminalID)
	}
	c.mu.Unlock()
	w.t.finish(ExitStatus{Code: -1}, err)
	w.done <- err
	return true
}

// takenOverSince reports whether m is the persistent server's refusal of
// a resume because another connection became the terminal's holder since
// the generation it names (PROTOCOL.md, "Holder generations"). Only the
// beginning of the message is fixed; what follows is for people.
func takenOverSince(m proto.Error) bool {
	return strings.HasPrefix(m.Message, fmt.Sprintf("ATTACH refused: terminal %q was taken over by another connection since this one held it", m.TerminalID))
}
