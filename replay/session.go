package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
)

// Control is one control frame the sidecar sent (OPENED, ERROR or EXIT).
type Control struct {
	Type   proto.Type
	Fields map[string]any // the JSON body
	Raw    []byte
}

// Term is what one terminal id has received so far.
type Term struct {
	Controls []Control
	Output   []byte

	// Credit accounting for the current life of the terminal.
	live      bool
	pending   bool    // an OPEN was sent and not answered yet
	nextLimit *uint64 // the credit of the pending OPEN
	limit     *uint64 // credit granted to the live terminal; nil when unthrottled
	lifeBytes uint64
}

// Count returns how many control frames of type t arrived.
func (t *Term) Count(typ proto.Type) int {
	n := 0
	for _, c := range t.Controls {
		if c.Type == typ {
			n++
		}
	}
	return n
}

// Session is a fresh sidecar driven frame by frame: the replayer uses it,
// and so does the fixture generator. Every frame received is kept, per
// terminal, along with any broken protocol promise.
type Session struct {
	// st carries the frames both ways, decoded as every Go host here
	// decodes them. KeepOnError: a fixture that makes the sidecar write
	// something undecodable is reported by Finish, not answered by
	// killing the sidecar under the replay.
	st *client.Stream

	mu         sync.Mutex
	change     chan struct{} // closed and replaced on every received frame
	terms      map[string]*Term
	order      []string // terminal ids in order of first appearance
	violations []string
	ended      bool  // the sidecar's stdout reached its end
	endErr     error // a decoding error, if that is how it ended
	inputEOF   bool  // Session closed the sidecar's stdin
	done       chan struct{}
}

// Start runs the sidecar at path with args.
func Start(path string, stderr io.Writer, args ...string) (*Session, error) {
	cmd := exec.Command(path, args...)
	cmd.Stderr = stderr
	s := &Session{change: make(chan struct{}), terms: map[string]*Term{}, done: make(chan struct{})}
	st, err := client.StartStream(cmd, client.StreamOptions{Handle: s.handle, KeepOnError: true})
	if err != nil {
		return nil, err
	}
	s.st = st
	go s.watchEnd()
	return s, nil
}

func (s *Session) term(id string) *Term {
	t := s.terms[id]
	if t == nil {
		t = &Term{}
		s.terms[id] = t
		s.order = append(s.order, id)
	}
	return t
}

func (s *Session) violate(format string, args ...any) {
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

// handle records one frame from the sidecar; the stream calls it in
// order from its reader goroutine.
func (s *Session) handle(f proto.Frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received(f)
	s.notifyLocked()
	return nil
}

// watchEnd marks the end of the sidecar's stdout, and how it ended.
func (s *Session) watchEnd() {
	defer close(s.done)
	err := s.st.ReadErr()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.endErr = err
	s.notifyLocked()
}

// notifyLocked wakes every Until; s.mu is held.
func (s *Session) notifyLocked() {
	close(s.change)
	s.change = make(chan struct{})
}

// received files one frame and checks the promises about it; s.mu is held.
func (s *Session) received(f proto.Frame) {
	if f.Type == proto.TypeOutput {
		id, data, err := proto.ParseData(f.Body)
		if err != nil {
			s.violate("undecodable OUTPUT: %v", err)
			return
		}
		t := s.term(id)
		if !t.live {
			s.violate("terminal %q: OUTPUT while it is not open (before OPENED or after EXIT)", id)
		}
		t.Output = append(t.Output, data...)
		t.lifeBytes += uint64(len(data))
		if t.limit != nil && t.lifeBytes > *t.limit {
			s.violate("terminal %q: %d output bytes sent with only %d bytes of credit granted", id, t.lifeBytes, *t.limit)
			t.limit = nil // say it once
		}
		return
	}
	c := Control{Type: f.Type, Raw: f.Body}
	if err := json.Unmarshal(f.Body, &c.Fields); err != nil {
		s.violate("%s frame with a body that is not a JSON object: %q", f.Type, f.Body)
		return
	}
	id, _ := c.Fields["terminalId"].(string)
	t := s.term(id)
	t.Controls = append(t.Controls, c)
	switch f.Type {
	case proto.TypeOpened:
		if t.live {
			s.violate("terminal %q: OPENED while already open", id)
		}
		t.live, t.pending = true, false
		t.limit, t.nextLimit, t.lifeBytes = t.nextLimit, nil, 0
	case proto.TypeError:
		if !t.live {
			t.pending, t.nextLimit = false, nil
		}
	case proto.TypeExit:
		if !t.live {
			s.violate("terminal %q: EXIT while it is not open", id)
		}
		t.live, t.limit = false, nil
	}
}

// Send writes one encoded frame to the sidecar, noting what it means for
// credit accounting.
func (s *Session) Send(frame []byte) error {
	f, err := proto.NewReader(bytes.NewReader(frame)).ReadFrame()
	if err == nil {
		s.mu.Lock()
		s.sent(f)
		s.mu.Unlock()
	}
	return s.st.Send(frame)
}

// SendFrame encodes and sends one frame.
func (s *Session) SendFrame(t proto.Type, body []byte) error {
	return s.Send(proto.AppendFrame(nil, t, body))
}

// SendJSON sends a control frame with v as its body.
func (s *Session) SendJSON(t proto.Type, v any) error { return s.SendFrame(t, proto.Marshal(v)) }

// Input sends an INPUT frame.
func (s *Session) Input(id, data string) error {
	return s.Send(proto.AppendDataFrame(nil, proto.TypeInput, id, []byte(data)))
}

// sent updates credit accounting for a frame going to the sidecar; s.mu is
// held. A grant counts from the moment it is sent, which can only make the
// check more lenient, never wrong.
func (s *Session) sent(f proto.Frame) {
	switch f.Type {
	case proto.TypeOpen:
		o, err := proto.ParseOpen(f.Body)
		if err != nil || o.TerminalID == "" {
			return
		}
		t := s.term(o.TerminalID)
		if t.live || t.pending {
			return // a duplicate: refused, and no business of the live one
		}
		t.pending, t.nextLimit = true, o.Credit
	case proto.TypeCredit:
		c, err := proto.ParseCredit(f.Body)
		if err != nil {
			return
		}
		if t := s.terms[c.TerminalID]; t != nil && t.live && t.limit != nil {
			*t.limit += c.Bytes
		}
	case proto.TypeClose:
		// CLOSE lifts the gate: the dying terminal is unthrottled.
		if c, err := proto.ParseClose(f.Body); err == nil {
			if t := s.terms[c.TerminalID]; t != nil {
				t.limit = nil
			}
		}
	}
}

// CloseInput closes the sidecar's stdin, which shuts it down.
func (s *Session) CloseInput() {
	s.mu.Lock()
	s.inputEOF = true
	for _, t := range s.terms {
		t.limit = nil // shutdown lifts every gate
	}
	s.mu.Unlock()
	s.st.CloseInput()
}

// View is a consistent look at everything received so far.
type View struct {
	s *Session
}

// Term returns what terminal id received (an empty Term if nothing).
func (v View) Term(id string) *Term {
	if t := v.s.terms[id]; t != nil {
		return t
	}
	return &Term{}
}

// Until waits until cond holds (it is called with the session locked, on
// every change) or d passes; it reports whether cond held.
func (s *Session) Until(d time.Duration, cond func(View) bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, ended, change := cond(View{s}), s.ended, s.change
		s.mu.Unlock()
		if ok {
			return true
		}
		if ended {
			return false
		}
		select {
		case <-change:
		case <-deadline.C:
			return false
		}
	}
}

// Finish closes stdin (if not done yet) and waits up to d for the sidecar
// to write its last frame and exit; it kills the sidecar after that.
func (s *Session) Finish(d time.Duration) error {
	s.mu.Lock()
	closed := s.inputEOF
	s.mu.Unlock()
	if !closed {
		s.CloseInput()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	var err error
	select {
	case <-s.done:
	case <-timer.C:
		s.st.Kill()
		<-s.done
		err = fmt.Errorf("sidecar did not exit within %v of its stdin closing", d)
	}
	if werr := s.st.WaitErr(); err == nil && werr != nil {
		err = fmt.Errorf("sidecar: %v", werr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.endErr != nil {
		err = fmt.Errorf("sidecar output: %w", s.endErr)
	}
	return err
}

// Kill ends the sidecar at once (for tests that leave early).
func (s *Session) Kill() {
	s.st.Kill()
	<-s.done
	s.st.WaitErr()
}
