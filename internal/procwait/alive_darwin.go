//go:build unix

package procwait

import "golang.org/x/sys/unix"

// Alive reports whether pid exists and has not exited (a zombie has).
func Alive(pid int) bool {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && k.Proc.P_pid == int32(pid) && k.Proc.P_stat != 5 // SZOMB
}
