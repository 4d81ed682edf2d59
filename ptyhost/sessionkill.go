//go:build unix

package ptyhost

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// sessionKills serves every KillSession without holders in this process.
//
// Finding a session's processes means a pass over the whole process table
// (every /proc/PID/stat on Linux), and a host whose terminals end together,
// a batch job's shells or a sidecar shutting down, used to pay one pass per
// terminal: n terminals cost n passes over a table that itself grows with
// n, the largest cost of 16 or 64 terminals ending at once. Requests made
// while a pass is running wait for the next one, which then serves all of
// them; a request is always served by a pass that began after it was made,
// so it sees every process that existed when it asked.
var sessionKills sessionKiller

type sessionKiller struct {
	mu      sync.Mutex
	next    *killBatch // requests waiting for the next pass
	running bool       // the scanning goroutine is alive
}

// killBatch is the requests one pass serves.
type killBatch struct {
	sigs   map[int][]syscall.Signal // session id → the signals asked for it
	killed map[int]int              // session id → processes signalled
	done   chan struct{}            // closed when the pass is over
}

// kill sends sig to every process of session sid except its leader (the
// caller's child, a zombie by now or still running) and ourselves, and
// returns how many it signalled.
func (k *sessionKiller) kill(sid int, sig syscall.Signal) int {
	k.mu.Lock()
	if k.next == nil {
		k.next = &killBatch{sigs: map[int][]syscall.Signal{}, killed: map[int]int{}, done: make(chan struct{})}
	}
	b := k.next
	b.sigs[sid] = append(b.sigs[sid], sig)
	if !k.running {
		k.running = true
		go k.scan()
	}
	k.mu.Unlock()
	<-b.done
	return b.killed[sid]
}

// scan runs passes while requests are waiting, then ends.
func (k *sessionKiller) scan() {
	self := os.Getpid()
	for {
		k.mu.Lock()
		b := k.next
		k.next = nil
		if b == nil {
			k.running = false
			k.mu.Unlock()
			return
		}
		k.mu.Unlock()
		sids := make(map[int]bool, len(b.sigs))
		for sid := range b.sigs {
			sids[sid] = true
		}
		// A failed listing signals nothing; the callers' fallbacks (the
		// group kill, the PTY hangup) still apply.
		procs, _ := sessionMembers(sids)
		for _, p := range procs {
			if p.zombie || p.pid == self || b.sigs[p.sid] == nil || p.pid == p.sid {
				continue
			}
			signalled := false
			for _, sig := range b.sigs[p.sid] {
				signalled = unix.Kill(p.pid, sig) == nil || signalled
			}
			if signalled {
				b.killed[p.sid]++
			}
		}
		close(b.done)
	}
}
