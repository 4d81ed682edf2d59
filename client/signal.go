package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Signals (PROTOCOL.md, "SIGNAL and FOREGROUND"). SIGNAL has no reply on
// success, so Signal follows it with a FOREGROUND question, which every
// sidecar that serves SIGNAL answers (on Windows too, with no pid): the
// sidecar handles a terminal's frames in order, so an ERROR about the
// SIGNAL comes before that answer, and the answer says that there was
// none.

// signalWait is a Signal waiting for the answer to its FOREGROUND.
type signalWait struct {
	s      *Stream    // the connection it went out on
	result chan error // buffered; gets one value
	told   bool       // result has its value (under t.mu)
}

// tell settles w once; under t.mu.
func (w *signalWait) tell(err error) {
	if !w.told {
		w.told = true
		w.result <- err
	}
}

// Signal delivers a signal to the terminal's foreground process group (the
// program running in it, or the shell when nothing else is), as the line
// discipline delivers SIGINT for a typed ^C. sig is a name as the sidecar
// takes it, with or without the SIG prefix and in any case ("SIGINT",
// "int", "SIGUSR1"), or a number 1..64 in decimal; it is the sidecar's
// platform that gives names and numbers their meaning, not this
// program's, so Signal takes no syscall.Signal (SIGUSR1 is 10 on Linux
// and 30 on macOS; a sidecar on this machine's system may be given
// strconv.Itoa(int(sig))). On Windows the sidecar knows SIGINT (a Ctrl-C typed into the
// console) and SIGHUP, SIGTERM and SIGKILL (the child's tree ends, and
// Wait reports the signal).
//
// Signal returns once the sidecar has taken the signal: nil when it sent
// it, or an error holding the sidecar's refusal (an unknown name, or one
// its platform does not serve) while the terminal runs on. A signal that
// ends the child is seen as Wait's ExitStatus.Signal. Signal fails
// without sending anything, with an error wrapping errors.ErrUnsupported
// when the sidecar does not serve signals (it lists no "signal" among
// OPENED's features), and with the terminal's end when it has finished
// already; a viewer may not signal (ErrViewing). While a reconnecting
// client is disconnected it fails with ErrDisconnected and sends nothing,
// and a drop before the answer gives ErrDisconnected too (the signal may
// have been delivered). Like every frame, it waits behind input the
// sidecar holds back for a child that does not read (see Write).
func (t *Terminal) Signal(sig string) error {
	fail := func(err error) error { return fmt.Errorf("terminal %q: signal %s: %w", t.id, sig, err) }
	if err := t.refuseViewing("signal " + sig); err != nil {
		return err
	}
	select {
	case <-t.done:
		_, err := t.Wait()
		if err == nil {
			err = errors.New("the terminal has exited")
		}
		return fail(err)
	default:
	}
	if !slices.Contains(t.features, proto.FeatureSignal) {
		return fail(fmt.Errorf("%w: the sidecar does not serve SIGNAL (no %q among its features)", errors.ErrUnsupported, proto.FeatureSignal))
	}
	if strings.TrimSpace(sig) == "" {
		return fail(errors.New("no signal named"))
	}
	frames := proto.AppendFrame(nil, proto.TypeSignal, proto.Marshal(proto.Signal{TerminalID: t.id, Signal: sig}))
	frames = proto.AppendFrame(frames, proto.TypeForeground, proto.Marshal(proto.Foreground{TerminalID: t.id}))
	w := &signalWait{result: make(chan error, 1)}
	// One Signal at a time per terminal registers and sends, so that the
	// waits are in the order their questions are on the wire.
	t.sigMu.Lock()
	t.mu.Lock()
	w.s = t.c.stream()
	t.signals = append(t.signals, w)
	t.mu.Unlock()
	s, err := t.c.sendNow(frames)
	if err != nil {
		t.mu.Lock()
		t.signals = slices.DeleteFunc(t.signals, func(x *signalWait) bool { return x == w })
		t.mu.Unlock()
		t.sigMu.Unlock()
		return fail(err)
	}
	t.sigMu.Unlock()
	if s != w.s {
		// A reconnect came between: the wait belongs to the old
		// connection and is dropped, and the answer comes on the new
		// one, unmatched. Whether the signal went out, say so.
		return fail(fmt.Errorf("%w: the connection changed while it was sent", ErrDisconnected))
	}
	timer := time.NewTimer(DefaultOpenTimeout)
	defer timer.Stop()
	select {
	case err := <-w.result:
		return t.signalResult(sig, err)
	case <-s.Done():
		if t.c.rc != nil {
			return fail(fmt.Errorf("%w: the connection dropped before the answer", ErrDisconnected))
		}
	case <-t.done:
	case <-timer.C:
		return fail(fmt.Errorf("no answer from the sidecar within %v", DefaultOpenTimeout))
	}
	// The terminal ended while the question waited: its EXIT settles it
	// (the sidecar answers nothing about a reaped child). An ERROR may
	// have come before.
	select {
	case err := <-w.result:
		return t.signalResult(sig, err)
	default:
	}
	<-t.done
	if _, err := t.Wait(); err != nil {
		return fail(err)
	}
	return nil
}

// signalResult is what Signal returns for the answer err.
func (t *Terminal) signalResult(sig string, err error) error {
	var se *SignalError
	if errors.As(err, &se) {
		se.Signal = sig
		return se
	}
	return err
}

// signalHead returns the oldest signal wait still to be answered on the
// current connection, dropping those of connections that ended; under
// t.mu.
func (t *Terminal) signalHead() *signalWait {
	for len(t.signals) > 0 {
		w := t.signals[0]
		select {
		case <-w.s.Done():
			t.signals = t.signals[1:]
			continue
		default:
		}
		return w
	}
	return nil
}

// signalRefused takes an ERROR about t that answers a SIGNAL (or, from a
// server that refuses it, the FOREGROUND behind it): the oldest waiting
// Signal fails with the message. Its wait stays queued for the FOREGROUND
// answer, which still comes.
func (t *Terminal) signalRefused(msg string) bool {
	if !strings.HasPrefix(msg, "SIGNAL") && !strings.HasPrefix(msg, "FOREGROUND") {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.signalHead()
	if w == nil {
		return false
	}
	w.tell(&SignalError{TerminalID: t.id, Message: msg})
	if strings.HasPrefix(msg, "FOREGROUND") {
		// No FOREGROUND answer follows a refused FOREGROUND.
		t.signals = t.signals[1:]
	}
	return true
}

// foregroundAnswered takes a FOREGROUND answer about t: the oldest
// waiting Signal was carried out, unless an ERROR said otherwise first.
func (t *Terminal) foregroundAnswered() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.signalHead(); w != nil {
		t.signals = t.signals[1:]
		w.tell(nil)
	}
}

// SignalError is a signal the sidecar refused, said with an ERROR frame
// about the live terminal: an unknown name, or one its platform does not
// serve ("SIGNAL SIGQUIT: signal 3: not supported on Windows"). The
// terminal is not affected.
type SignalError struct {
	TerminalID string
	Signal     string // as Signal was given it
	Message    string // the sidecar's words
}

func (e *SignalError) Error() string {
	return fmt.Sprintf("terminal %q: signal %s: the sidecar refused it: %s", e.TerminalID, e.Signal, e.Message)
}
