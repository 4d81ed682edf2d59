//go:build unix

package main

import (
	"fmt"
	"io"
	"syscall"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// The baseline host: the same children in the same kind of PTY, read and
// written directly by this process, with no frames and no second process
// in between. It uses ptyhost, the sidecar's own PTY engine, so the only
// difference the ratios show is what the sidecar adds.

func startDirect(cmd string, args ...string) (*ptyhost.Process, error) {
	return ptyhost.Start(ptyhost.Config{Cmd: cmd, Args: args, Cols: 80, Rows: 24})
}

// drainDirect reads p to EOF with reads of up to 64 KiB (the sidecar's
// read size), calls onData for each chunk, then reaps the child.
func drainDirect(p *ptyhost.Process, onData func([]byte)) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := p.Read(buf)
		n += int64(m)
		if onData != nil && m > 0 {
			onData(buf[:m])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			p.SignalGroup(syscall.SIGKILL)
			p.Reap()
			p.Close()
			return n, err
		}
	}
	if err := p.WaitExit(); err != nil {
		return n, err
	}
	st, err := p.Reap()
	p.Close()
	if err != nil {
		return n, err
	}
	if st.Code != 0 && st.Signal == 0 {
		return n, fmt.Errorf("pid %d exited with %d", p.Pid(), st.Code)
	}
	return n, nil
}
