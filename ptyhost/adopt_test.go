//go:build unix

package ptyhost

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A child adopted by pid, with a copy of its master, is waited for, reaped
// and read through the adopted Process, as after a re-exec; a read past
// its deadline returns the deadline error and the next one the output.
func TestAdopt(t *testing.T) {
	p, err := Start(Config{Cmd: "/bin/sh", Args: []string{"-c", "read x; echo got $x; exit 3"}, Cols: 80, Rows: 24,
		NoParentDeathSignal: true})
	require.NoError(t, err)
	fd, err := p.MasterFD()
	require.NoError(t, err)
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	require.NoError(t, err)
	pid, pts := p.Pid(), p.TTY()
	// The first handle goes away unreaped, as an exec'd image's does.
	p.Close()
	a, err := Adopt(pid, os.NewFile(uintptr(dup), pts), pts)
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.SetReadDeadline(time.Now()))
	_, err = a.Read(make([]byte, 64))
	require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "read past the deadline: %v", err)
	require.NoError(t, a.SetReadDeadline(time.Time{}))
	_, err = a.Write([]byte("x\n"))
	require.NoError(t, err)
	out := readAll(t, a)
	require.Contains(t, out, "got x")
	require.NoError(t, a.WaitExit())
	st, err := a.Reap()
	require.NoError(t, err)
	require.Equal(t, 3, st.Code)
}
