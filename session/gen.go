//go:build unix

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
