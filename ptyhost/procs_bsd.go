//go:build darwin || freebsd

package ptyhost

// holderProcs finds nothing on macOS and FreeBSD: neither lists another
// process's open files through x/sys (macOS has proc_pidinfo in libproc,
// FreeBSD kern.proc.filedesc; both need more than a sysctl by name). A
// process that left the terminal's session with setsid(2) but kept the PTY
// as its stdio is therefore not signalled there; the sidecar's last resort,
// closing the PTY master, still ends its reads and writes with an error.
func holderProcs(match func(fdPath, target string) bool) []int { return nil }

// sessionMembers is sessionProcs: the process tables of macOS and FreeBSD
// come in one sysctl, and their session ids with it or from getsid(2).
func sessionMembers(sids map[int]bool) ([]procInfo, error) { return sessionProcs(sids) }

// trimDeleted is the identity: only Linux marks unlinked targets.
func trimDeleted(target string) string { return target }

// SZOMB is the BSD process state of a zombie (sys/proc.h).
const szomb = 5
