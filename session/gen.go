package session

import "time"

// writeInput writes an INPUT's bytes to the PTY and returns, with the count
// written, the output generation just before the write: output the daemon
// reads later than that may be a reaction to this input, output counted in
// it cannot be. Holding inputMu while reading it keeps a concurrent query
// reply from slipping in between.
func (d *Daemon) writeInput(b []byte) (n int, gen int64, err error) {
	d.inputMu.Lock()
	defer d.inputMu.Unlock()
	d.st.mu.Lock()
	gen = d.st.gen
	d.st.mu.Unlock()
	d.proc.SetWriteDeadline(time.Now().Add(inputTimeout))
	defer d.proc.SetWriteDeadline(time.Time{})
	n, err = d.proc.Write(b)
	return n, gen, err
}

// waitGen is WAIT with "after_gen": it returns once the output generation
// has passed after or the program has exited, without touching the
// activity flag. timeout is nil for no bound.
func (d *Daemon) waitGen(after int64, timeout <-chan time.Time, gone <-chan struct{}) (any, error) {
	st := d.st
	for {
		st.mu.Lock()
		gen, exited := st.gen, st.exited
		changed := st.changed
		st.mu.Unlock()
		if gen > after || exited {
			return WaitData{OutputGen: &gen, Exited: &exited}, nil
		}
		if d.parkHook != nil {
			d.parkHook()
		}
		select {
		case <-changed:
		case <-gone:
			return nil, errClientGone
		case <-d.done:
			return nil, requestError("Daemon is shutting down")
		case <-timeout:
			f := false
			return WaitData{OutputGen: &gen, Exited: &f, TimedOut: true}, nil
		}
	}
}
