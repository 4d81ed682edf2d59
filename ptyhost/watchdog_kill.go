package ptyhost

import (
	"os"

	"golang.org/x/sys/unix"
)

// killWatched sends SIGKILL to every process in an announced session or
// holding an announced PTY, and returns how many it signalled. It finds
// them in the platform's process table (procs_*.go): /proc on Linux,
// sysctl kern.proc on macOS and FreeBSD, where PTY holders outside the
// session cannot be found (see holderProcs).
func killWatched(live map[int]watched) int {
	// A session id is safe to match while the session has members: the
	// kernel does not reuse a pid that is still some process's session id.
	// Once every member is gone the number may come back as a new
	// process's pid; then the leader's start time differs and we stop
	// matching that session.
	sids := map[int]bool{}
	pts := map[string]watched{}
	for sid, w := range live {
		if st, err := startTime(sid); err == nil && st != w.start {
			continue // the pid belongs to someone else now
		}
		sids[sid] = true
		pts[w.pts] = w
	}
	targets := map[int]bool{}
	procs, _ := sessionProcs(sids)
	for _, p := range procs {
		if !p.zombie { // a zombie is dead already; its new parent reaps it
			targets[p.pid] = true
		}
	}
	if len(pts) > 0 {
		for _, pid := range holderProcs(func(fdPath, target string) bool { return holdsWatched(fdPath, target, pts) }) {
			targets[pid] = true
		}
	}
	delete(targets, os.Getpid())
	n := 0
	for pid := range targets {
		if unix.Kill(pid, unix.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// holdsWatched reports whether the open file fdPath, a link to target, is
// one of the announced PTY slaves. A PTY number is reused as soon as its
// last holder closes it, so a path alone could name a stranger's terminal;
// the node's device, inode and change time must match what was announced
// as well.
func holdsWatched(fdPath, target string, pts map[string]watched) bool {
	// Once the master is closed (we died), the slave's node is unlinked
	// from /dev/pts and the link reads "... (deleted)".
	w, ok := pts[trimDeleted(target)]
	if !ok {
		return false
	}
	dev, ino, ctime := ttyIdentity(fdPath)
	return dev == w.dev && ino == w.ino && ctime == w.ctime
}

// ttyIdentity stats the PTY slave node.
func ttyIdentity(path string) (dev, ino uint64, ctime int64) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0, 0, 0
	}
	return uint64(st.Dev), st.Ino, st.Ctim.Nano()
}
