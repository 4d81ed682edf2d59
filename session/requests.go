package session

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// handle executes one request and answers it, except STOP, which Serve
// answers after teardown. It reports whether the request was a STOP.
func (d *Daemon) handle(r *request) (stop bool) {
	if r.readErr != nil {
		respond(r.conn, nil, r.readErr)
		return false
	}
	f, typ, err := parseRequest(r.line)
	if err != nil {
		respond(r.conn, nil, err)
		return false
	}
	lift := f.liftData
	if typ == "INPUT" {
		lift = f.liftInputData
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
		err = requestError("Unknown command: " + typ)
	}
	if err == errClientGone {
		r.conn.Close()
		return false
	}
	respond(r.conn, data, err)
	return false
}

func (d *Daemon) input(f fields) (any, error) {
	text, ok, err := f.string("data")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalidf("missing 'data' field")
	}
	withGen, err := f.bool("with_gen")
	if err != nil {
		return nil, err
	}
	d.st.mu.Lock()
	exited := d.st.exited
	d.st.mu.Unlock()
	if exited {
		return nil, requestError("Process not running")
	}
	n, gen, err := d.writeInput([]byte(text))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, requestError(fmt.Sprintf("Failed to send input: the program has not read its input for %v (%d of %d bytes sent)", inputTimeout, n, len(text)))
	}
	if err != nil {
		return nil, requestError(fmt.Sprintf("Failed to send input: %v", err))
	}
	if withGen {
		return InputData{OutputGen: gen}, nil
	}
	return nil, nil
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

func (d *Daemon) kill(f fields) (any, error) {
	name := "SIGTERM"
	if f.has("signal") {
		var err error
		if name, err = signalField(f); err != nil {
			return nil, err
		}
	}
	sig, canon, err := ParseSignal(name)
	if err != nil {
		return nil, err
	}
	d.st.mu.Lock()
	exited := d.st.exited
	d.st.mu.Unlock()
	if exited {
		return nil, requestError("Process already dead")
	}
	if err := d.proc.Signal(sig); err != nil {
		return nil, requestError(fmt.Sprintf("Failed to send signal: %v", err))
	}
	return KillData{SignalSent: canon}, nil
}

// signalField accepts the signal as a string ("SIGINT", "9") or a number.
func signalField(f fields) (string, error) {
	if s, _, err := f.string("signal"); err == nil {
		return s, nil
	}
	n, _, err := f.int("signal")
	if err != nil {
		return "", invalidf("field 'signal' must be a signal name or number")
	}
	return fmt.Sprint(n), nil
}

func (d *Daemon) resize(f fields) (any, error) {
	cols, okc, err := f.int("cols")
	if err != nil {
		return nil, err
	}
	rows, okr, err := f.int("rows")
	if err != nil {
		return nil, err
	}
	if !okc || !okr {
		return nil, invalidf("RESIZE needs 'cols' and 'rows'")
	}
	if cols < 1 || rows < 1 || cols > maxDim || rows > maxDim {
		return nil, requestError(fmt.Sprintf("Invalid size: %dx%d (each must be 1..%d)", cols, rows, maxDim))
	}
	// Screen first, then the PTY: the child redraws on SIGWINCH, and that
	// output must land on a screen of the new size.
	d.st.mu.Lock()
	d.st.scr.Resize(cols, rows)
	d.st.mu.Unlock()
	if err := d.proc.Resize(cols, rows); err != nil {
		return nil, requestError(fmt.Sprintf("Failed to resize: %v", err))
	}
	return ResizeData{Size: Size{Rows: rows, Cols: cols}, Cols: cols, Rows: rows}, nil
}

func (d *Daemon) debug(f fields) (any, error) {
	// interminai nests "clear" under "data"; handle has lifted it.
	clear, err := f.bool("clear")
	if err != nil {
		return nil, err
	}
	d.st.mu.Lock()
	seqs, dropped := d.st.scr.Unhandled()
	if clear {
		d.st.scr.ClearUnhandled()
	}
	d.st.mu.Unlock()
	out := DebugData{Unhandled: make([]UnhandledSeq, 0, len(seqs)), Dropped: dropped}
	for _, s := range seqs {
		out.Unhandled = append(out.Unhandled, UnhandledSeq{Sequence: s.Sequence, RawHex: s.RawHex})
	}
	t, err := d.proc.Termios()
	if err != nil {
		return nil, requestError(fmt.Sprintf("Failed to read terminal settings: %v", err))
	}
	out.Termios = describeTermios(t)
	return out, nil
}
