//go:build unix

package session

import (
	"errors"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// errClientGone ends a WAIT whose client hung up; nobody is left to answer.
var errClientGone = errors.New("client hung up")

func (d *Daemon) status(f wire.Fields) (any, error) {
	activityMode, err := f.Bool("activity")
	if err != nil {
		return nil, err
	}
	withGen, err := f.Bool("with_gen")
	if err != nil {
		return nil, err
	}
	input, err := f.Bool("input")
	if err != nil {
		return nil, err
	}
	var waiting *bool
	if input {
		// Before st.mu: the sample takes it itself, and reads /proc.
		waiting = d.waitingForInput()
	}
	st := d.st
	st.mu.Lock()
	defer st.mu.Unlock()
	cols, rows := st.scr.Size()
	out := wire.StatusData{
		Running:             !st.exited,
		Size:                wire.Size{Rows: rows, Cols: cols},
		ScrollbackAvailable: st.scr.ScrollbackLen(),
		ScrollbackCapacity:  st.scr.ScrollbackCap(),
		AppCursorKeys:       st.scr.AppCursorKeys(),
		BracketedPaste:      st.scr.BracketedPaste(),
		AltScreen:           st.scr.AltScreen(),
		Title:               st.scr.Title(),
		PTYDumpStopped:      d.dump.stopInfo(),
	}
	if activityMode {
		a := st.activity
		st.activity = false
		out.Activity = &a
	}
	if st.exited {
		code := st.exitCode
		out.ExitCode = &code
	}
	if withGen {
		gen := st.gen
		out.OutputGen = &gen
	}
	if !st.exited {
		out.WaitingForInput = waiting
	}
	return out, nil
}

// wait blocks until the child exits (normal mode) or until output arrives
// or the child exits (activity mode, and after_gen). Normal mode wakes on
// the state's change channel; activity mode and after_gen are answered
// by the PTY reader as soon as it has fed the output (wake.go). Either
// way it answers as soon as the reader or exit watcher reports, never by
// polling. The optional timeout_ms (a ptyplex addition) bounds the wait;
// a client hang-up or daemon shutdown ends it without an answer.
func (d *Daemon) wait(f wire.Fields, conn *clientConn, gone <-chan struct{}) (any, error) {
	activityMode, err := f.Bool("activity")
	if err != nil {
		return nil, err
	}
	limit, hasTimeout, err := f.Timeout("timeout_ms")
	if err != nil {
		return nil, err
	}
	var timeout <-chan time.Time
	if hasTimeout {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	input, err := f.Bool("input")
	if err != nil {
		return nil, err
	}
	if input {
		return d.waitInput(f, timeout, gone)
	}
	if f.Has("after_gen") {
		after, _, err := f.Whole("after_gen")
		if err != nil {
			return nil, err
		}
		return d.awaitOutput(newWaiter(conn, false, int64(after)), timeout, gone)
	}
	if activityMode {
		return d.awaitOutput(newWaiter(conn, true, 0), timeout, gone)
	}
	st := d.st
	for {
		st.mu.Lock()
		exited, code := st.exited, st.exitCode
		changed := st.changed
		st.mu.Unlock()
		if exited {
			return wire.WaitData{ExitCode: &code}, nil
		}
		if d.parkHook != nil {
			d.parkHook()
		}
		select {
		case <-changed:
		case <-gone:
			return nil, errClientGone
		case <-d.done:
			return nil, wire.RequestError("Daemon is shutting down")
		case <-timeout:
			return wire.WaitData{TimedOut: true}, nil
		}
	}
}
