//go:build unix

package ptyhost

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Identity names a terminal so that a process other than the one that
// started it (the watchdog, after its parent died) can find the
// terminal's processes later without mistaking a stranger for one of
// them: pids and PTY numbers are reused, so each comes with what tells a
// reuse apart.
type Identity struct {
	SID   int    // the leader's pid, which is the session and group id
	Start uint64 // the leader's start time, to notice a reused pid
	PTS   string // the PTY slave's path
	Dev   uint64 // identity of the PTY slave node, to notice a reused PTY
	Ino   uint64
	Ctime int64
}

// Identity is p's terminal as KillIdentified finds it.
func (p *Process) Identity() Identity {
	start, _ := startTime(p.pid)
	dev, ino, ctime := ttyIdentity(p.pts)
	return Identity{SID: p.pid, Start: start, PTS: p.pts, Dev: dev, Ino: ino, Ctime: ctime}
}

// String is id as one line of text, which ParseIdentity reads back: how
// the watchdog and an upgrade's keeper are told of terminals.
func (id Identity) String() string {
	return fmt.Sprintf("%d %d %s %d %d %d", id.SID, id.Start, id.PTS, id.Dev, id.Ino, id.Ctime)
}

// ParseIdentity reads what Identity.String wrote.
func ParseIdentity(s string) (Identity, error) {
	f := strings.Fields(s)
	if len(f) != 6 {
		return Identity{}, fmt.Errorf("terminal identity %q: want 6 fields", s)
	}
	var id Identity
	var errs [5]error
	id.SID, errs[0] = strconv.Atoi(f[0])
	id.Start, errs[1] = strconv.ParseUint(f[1], 10, 64)
	id.PTS = f[2]
	id.Dev, errs[2] = strconv.ParseUint(f[3], 10, 64)
	id.Ino, errs[3] = strconv.ParseUint(f[4], 10, 64)
	id.Ctime, errs[4] = strconv.ParseInt(f[5], 10, 64)
	for _, err := range errs {
		if err != nil {
			return Identity{}, fmt.Errorf("terminal identity %q: %w", s, err)
		}
	}
	return id, nil
}

// KillAllIdentified kills the processes of the terminals live until a pass
// of KillIdentified finds none (they may still be forking), at most
// passes times; it reports whether none was left.
func KillAllIdentified(live []Identity, passes int) bool {
	for pass := 0; pass < passes; pass++ {
		if KillIdentified(live) == 0 {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// KillIdentified sends SIGKILL to every process in one of the sessions
// or holding one of the PTYs, and returns how many it signalled. It finds
// them in the platform's process table (procs_*.go): /proc on Linux,
// sysctl kern.proc on macOS and FreeBSD, where PTY holders outside the
// session cannot be found (see holderProcs).
func KillIdentified(live []Identity) int {
	// A session id is safe to match while the session has members: the
	// kernel does not reuse a pid that is still some process's session id.
	// Once every member is gone the number may come back as a new
	// process's pid; then the leader's start time differs and we stop
	// matching that session.
	sids := map[int]bool{}
	pts := map[string]Identity{}
	for _, w := range live {
		if st, err := startTime(w.SID); err == nil && st != w.Start {
			continue // the pid belongs to someone else now
		}
		sids[w.SID] = true
		pts[w.PTS] = w
	}
	targets := map[int]bool{}
	procs, _ := sessionProcs(sids)
	for _, p := range procs {
		if !p.zombie { // a zombie is dead already; its new parent reaps it
			targets[p.pid] = true
		}
	}
	if len(pts) > 0 {
		for _, pid := range holderProcs(func(fdPath, target string) bool { return holdsIdentified(fdPath, target, pts) }) {
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

// holdsIdentified reports whether the open file fdPath, a link to target,
// is one of the given PTY slaves. A PTY number is reused as soon as its
// last holder closes it, so a path alone could name a stranger's terminal;
// the node's device, inode and change time must match as well.
func holdsIdentified(fdPath, target string, pts map[string]Identity) bool {
	// Once the master is closed (its host died), the slave's node is
	// unlinked from /dev/pts and the link reads "... (deleted)".
	w, ok := pts[trimDeleted(target)]
	if !ok {
		return false
	}
	dev, ino, ctime := ttyIdentity(fdPath)
	return dev == w.Dev && ino == w.Ino && ctime == w.Ctime
}

// ttyIdentity stats the PTY slave node.
func ttyIdentity(path string) (dev, ino uint64, ctime int64) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0, 0, 0
	}
	return uint64(st.Dev), st.Ino, st.Ctim.Nano()
}
