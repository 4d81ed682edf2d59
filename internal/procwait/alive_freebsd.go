//go:build unix

package procwait

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid exists and has not exited (a zombie has). It
// reads ki_pid and ki_stat from the 64-bit struct kinfo_proc (1088 bytes;
// see ptyhost/procs_freebsd.go).
func Alive(pid int) bool {
	b, err := unix.SysctlRaw("kern.proc.pid", pid)
	if err != nil || len(b) < 1088 || binary.LittleEndian.Uint32(b) != 1088 {
		return false
	}
	return int32(binary.LittleEndian.Uint32(b[72:])) == int32(pid) && b[388] != 5 // SZOMB
}
