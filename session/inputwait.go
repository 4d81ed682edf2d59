//go:build unix

package session

import (
	"errors"
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/session/wire"
)

// The kernel does not announce that a task went to sleep reading its
// terminal, so a WAIT for input samples it: every inputPoll, and to call
// the program waiting two samples inputSettle apart must both say so with
// no output in between. The settle keeps a program that reads its
// terminal between bursts of output (a spinner polling for a key) from
// ending the wait while it still prints.
const (
	inputPoll   = 10 * time.Millisecond
	inputSettle = 50 * time.Millisecond
)

// inputSample is one look at the foreground program.
type inputSample struct {
	state ptyhost.InputState
	gen   int64 // output generation on the screen
	// drained: every byte the program wrote has been read from the PTY
	// and fed to the screen, so the screen is what the program left.
	drained bool
}

// sampleInput reads the kernel's view of the foreground group and whether
// the output has all reached the screen. The order matters: the reader
// counts bytes before it feeds them (readPTY), so reading that count
// first, then the PTY's unread bytes, then the fed generation, a byte the
// program wrote at any point of the sample shows up in one of the three.
func (d *Daemon) sampleInput() inputSample {
	state, err := d.proc.InputState()
	if err != nil && !errors.Is(err, ptyhost.ErrNoForeground) {
		state = ptyhost.InputUnknown
	}
	read := d.readBytes.Load()
	unread, uerr := d.proc.UnreadOutput()
	d.st.mu.Lock()
	gen := d.st.gen
	d.st.mu.Unlock()
	return inputSample{state: state, gen: gen, drained: uerr == nil && unread == 0 && read == gen}
}

// waitingForInput is STATUS's one-sample answer: nil when the platform
// cannot tell (or the program has exited).
func (d *Daemon) waitingForInput() *bool {
	s := d.sampleInput()
	if s.state == ptyhost.InputUnknown {
		return nil
	}
	w := s.state == ptyhost.InputWaiting && s.drained
	return &w
}

// waitInput answers WAIT {"input": true}: it returns once the foreground
// program is blocked reading the terminal with all its output on the
// screen, twice in a row inputSettle apart. With after_gen (the
// generation INPUT "with_gen" returned) the program must first react to
// the input: print something past that generation or be seen busy, so
// that a wait sent right after the input does not return on the old
// prompt before the program has even woken up.
func (d *Daemon) waitInput(f wire.Fields, timeout <-chan time.Time, gone <-chan struct{}) (any, error) {
	var after *int64
	if f.Has("after_gen") {
		n, _, err := f.Whole("after_gen")
		if err != nil {
			return nil, err
		}
		a := int64(n)
		after = &a
	}
	tick := time.NewTicker(inputPoll)
	defer tick.Stop()
	reacted := after == nil
	var candidate *inputSample // first sample of a settle
	var candidateAt time.Time
	unknownSince := time.Time{}
	var unknownGen int64
	for {
		d.st.mu.Lock()
		exited, code := d.st.exited, d.st.exitCode
		d.st.mu.Unlock()
		if exited {
			t := true
			return wire.WaitData{ExitCode: &code, Exited: &t}, nil
		}
		s := d.sampleInput()
		now := time.Now()
		if !reacted && (s.gen > *after || s.state == ptyhost.InputBusy) {
			reacted = true
		}
		switch {
		case s.state == ptyhost.InputUnknown:
			// The fallback: no output for wire.InputQuietFallback.
			candidate = nil
			if unknownSince.IsZero() || s.gen != unknownGen || !s.drained {
				unknownSince, unknownGen = now, s.gen
			} else if reacted && now.Sub(unknownSince) >= wire.InputQuietFallback {
				return d.inputAnswer(s, "quiet"), nil
			}
		case !reacted || s.state != ptyhost.InputWaiting || !s.drained:
			candidate, unknownSince = nil, time.Time{}
		case candidate == nil || candidate.gen != s.gen:
			c := s
			candidate, candidateAt, unknownSince = &c, now, time.Time{}
		case now.Sub(candidateAt) >= inputSettle:
			return d.inputAnswer(s, "kernel"), nil
		}
		select {
		case <-tick.C:
		case <-gone:
			return nil, errClientGone
		case <-d.done:
			return nil, wire.RequestError("Daemon is shutting down")
		case <-timeout:
			return wire.WaitData{TimedOut: true}, nil
		}
	}
}

func (d *Daemon) inputAnswer(s inputSample, how string) wire.WaitData {
	t := true
	gen := s.gen
	return wire.WaitData{WaitingForInput: &t, Detection: how, OutputGen: &gen}
}
