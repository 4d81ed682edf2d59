//go:build unix

package session

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/session/wire"
)

// handle executes one request and answers it, except STOP, which Serve
// answers after teardown. It reports whether the request was a STOP.
func (d *Daemon) handle(r *request) (stop bool) {
	if r.readErr != nil {
		respond(r.conn, nil, r.readErr)
		return false
	}
	f, typ, err := wire.ParseRequest(r.line)
	if err != nil {
		respond(r.conn, nil, err)
		return false
	}
	lift := f.LiftData
	if typ == "INPUT" {
		lift = f.LiftInputData
	}
	if err := lift(); err != nil {
		respond(r.conn, nil, err)
		return false
	}
	var data any
	switch typ {
	case "INPUT":
		data, err = d.input(f)
	case "OUTPUT":
		data, err = d.output(f)
	case "STATUS", "RUNNING": // RUNNING: interminai's older name, answered alike
		data, err = d.status(f)
	case "WAIT":
		// Answered on its own goroutine so that it holds back nobody (see
		// async.go); every other request keeps its arrival order.
		d.goAsync(r, func() (any, error) { return d.wait(f, r.conn, r.gone) })
		return false
	case "RUN":
		// Like WAIT, on its own goroutine: a command may take long.
		d.goAsync(r, func() (any, error) { return d.run(f, r.gone) })
		return false
	case "COMMANDS":
		data, err = d.commands(f)
	case "KILL":
		data, err = d.kill(f)
	case "RESIZE":
		data, err = d.resize(f)
	case "DEBUG":
		data, err = d.debug(f)
	case "STOP":
		d.stopReq <- r
		return true
	default:
		err = wire.RequestError("Unknown command: " + typ)
	}
	if err == errClientGone {
		r.conn.Close()
		return false
	}
	d.answer(r.conn, data, err)
	return false
}

func (d *Daemon) input(f wire.Fields) (any, error) {
	text, err := inputBytes(f)
	if err != nil {
		return nil, err
	}
	withGen, err := f.Bool("with_gen")
	if err != nil {
		return nil, err
	}
	d.st.mu.Lock()
	exited := d.st.exited
	d.st.mu.Unlock()
	if exited {
		return nil, wire.RequestError("Process not running")
	}
	n, gen, err := d.writeInput(text)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, wire.RequestError(fmt.Sprintf("Failed to send input: the program has not read its input for %v (%d of %d bytes sent)", inputTimeout, n, len(text)))
	}
	if err != nil {
		return nil, wire.RequestError(fmt.Sprintf("Failed to send input: %v", err))
	}
	if withGen {
		return wire.InputData{OutputGen: gen}, nil
	}
	return nil, nil
}

// inputBytes is what an INPUT types: the bytes of data_b64 when given (an
// addition: a JSON string cannot carry bytes that are not UTF-8), else the
// UTF-8 bytes of the data string. A client sends data beside data_b64 for
// daemons that know only data; this one ignores it then.
func inputBytes(f wire.Fields) ([]byte, error) {
	b64, ok, err := f.Str("data_b64")
	if err != nil {
		return nil, err
	}
	if ok {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, wire.Invalidf("field 'data_b64' must be standard base64: %v", err)
		}
		return b, nil
	}
	text, ok, err := f.Str("data")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, wire.Invalidf("missing 'data' field")
	}
	return []byte(text), nil
}

// Bounds on PTY writes. Requests run one at a time, so an INPUT blocked on
// a child that stopped reading would hold up every later request; a query
// reply that nobody reads is worth even less.
const (
	inputTimeout = 5 * time.Second
	replyTimeout = time.Second
)

// writePTY writes b to the PTY, giving up after timeout. INPUT and query
// replies take turns so their bytes never interleave.
func (d *Daemon) writePTY(b []byte, timeout time.Duration) (int, error) {
	d.inputMu.Lock()
	defer d.inputMu.Unlock()
	d.proc.SetWriteDeadline(time.Now().Add(timeout))
	defer d.proc.SetWriteDeadline(time.Time{})
	return d.proc.Write(b)
}

func (d *Daemon) kill(f wire.Fields) (any, error) {
	name := "SIGTERM"
	if f.Has("signal") {
		var err error
		if name, err = signalField(f); err != nil {
			return nil, err
		}
	}
	sig, canon, err := signame.ParseSession(name)
	if err != nil {
		return nil, wire.RequestError(err.Error())
	}
	d.st.mu.Lock()
	exited := d.st.exited
	d.st.mu.Unlock()
	if exited {
		return nil, wire.RequestError("Process already dead")
	}
	if err := d.proc.Signal(sig); err != nil {
		return nil, wire.RequestError(fmt.Sprintf("Failed to send signal: %v", err))
	}
	return wire.KillData{SignalSent: canon}, nil
}

// signalField accepts the signal as a string ("SIGINT", "9") or a number.
func signalField(f wire.Fields) (string, error) {
	if s, _, err := f.Str("signal"); err == nil {
		return s, nil
	}
	n, _, err := f.Int("signal")
	if err != nil {
		return "", wire.Invalidf("field 'signal' must be a signal name or number")
	}
	return fmt.Sprint(n), nil
}

func (d *Daemon) resize(f wire.Fields) (any, error) {
	cols, okc, err := f.Int("cols")
	if err != nil {
		return nil, err
	}
	rows, okr, err := f.Int("rows")
	if err != nil {
		return nil, err
	}
	if !okc || !okr {
		return nil, wire.Invalidf("RESIZE needs 'cols' and 'rows'")
	}
	if cols < 1 || rows < 1 || cols > wire.MaxDim || rows > wire.MaxDim {
		return nil, wire.RequestError(fmt.Sprintf("Invalid size: %dx%d (each must be 1..%d)", cols, rows, wire.MaxDim))
	}
	// Screen first, then the PTY: the child redraws on SIGWINCH, and that
	// output must land on a screen of the new size. After the exit the
	// final screen is resized all the same, as interminai does (a script
	// may resize whenever it likes); the PTY may be gone by then.
	d.st.mu.Lock()
	exited := d.st.exited
	d.st.scr.Resize(cols, rows)
	d.st.mu.Unlock()
	if err := d.proc.Resize(cols, rows); err != nil && !exited {
		return nil, wire.RequestError(fmt.Sprintf("Failed to resize: %v", err))
	}
	return wire.ResizeData{Size: wire.Size{Rows: rows, Cols: cols}, Cols: cols, Rows: rows}, nil
}

func (d *Daemon) debug(f wire.Fields) (any, error) {
	// interminai nests "clear" under "data"; handle has lifted it.
	clear, err := f.Bool("clear")
	if err != nil {
		return nil, err
	}
	d.st.mu.Lock()
	seqs, dropped := d.st.scr.Unhandled()
	if d.keepNoSeqs {
		seqs, dropped = nil, dropped+len(seqs)
	}
	if clear {
		d.st.scr.ClearUnhandled()
	}
	d.st.mu.Unlock()
	out := wire.DebugData{Unhandled: make([]wire.UnhandledSeq, 0, len(seqs)), Dropped: dropped}
	for _, s := range seqs {
		out.Unhandled = append(out.Unhandled, wire.UnhandledSeq{Sequence: s.Sequence, RawHex: s.RawHex})
	}
	t, err := d.proc.Termios()
	if err != nil {
		return nil, wire.RequestError(fmt.Sprintf("Failed to read terminal settings: %v", err))
	}
	info := describeTermios(t)
	out.Termios = &info
	return out, nil
}
