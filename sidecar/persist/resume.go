//go:build unix

package persist

import (
	"net"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/sidecar/engine"
	"golang.org/x/sys/unix"
)

// Resume builds the server a previous image of this process handed over
// (see upgrade.go): stateFD is the state file it wrote; remap, for
// descriptors that came back from a keeper, the descriptor each number in
// the state stands for (nil: inherited, the numbers are ours). opts' Log,
// Name and Args are used; the journal options come from the state.
//
// Resume first reads and checks everything without changing a
// descriptor; an error from that part means nothing was touched, and the
// caller may hand the same state to another binary (the previous one).
// After it, a terminal that cannot be adopted is reported exited, and
// everything else goes on.
func Resume(opts Options, stateFD int, remap map[string]int) (*Server, *net.UnixListener, error) {
	st, journals, ln, mapped, err := readState(stateFD, remap)
	if err != nil {
		return nil, nil, err
	}
	// The journals are copied into their chunks below; then the mapping
	// and the file go.
	defer unix.Munmap(mapped)
	// From here on the state is ours. Every descriptor goes back to
	// close-on-exec, so that no terminal started from now on inherits
	// another's PTY master (and no later upgrade hands over a stray).
	fds := []int{st.Listener, stateFD}
	if st.Lock >= 0 {
		fds = append(fds, st.Lock)
	}
	for _, ts := range st.Terms {
		if ts.Running {
			fds = append(fds, ts.Master)
		}
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
	unix.Close(st.Listener) // ln is a duplicate
	unix.Close(stateFD)
	if st.Lock >= 0 {
		keepLock = os.NewFile(uintptr(st.Lock), "lock")
	}
	opts.Journal, opts.Total, opts.KeepExited = st.Journal, st.Total, st.KeepExited
	if opts.Name == "" {
		opts.Name = st.Name
	}
	s := New(opts)
	s.resumeDisk()
	s.restoreHoldGens(st)
	for i, ts := range st.Terms {
		s.restore(ts, journals[i])
	}
	s.logf("took over %s from version %s (handover format %d); this is version %s, pid %d",
		Terminals(len(st.Terms)), st.From, st.Format, version.Version, os.Getpid())
	return s, ln, nil
}

// restore makes a term of ts and starts what it needs: the reader while
// the PTY has not ended, the supervisor while the child is not reaped,
// the input writer if input was queued, and the timers that were set.
func (s *Server) restore(ts termState, journal []byte) {
	t := ts.term(s, journal)
	// The colours its answers give and the replies they gave, before
	// its reader runs.
	t.answers.resumeColours(ts.Colours)
	t.answers.resumeAnswered(ts.Answered)
	s.adoptDisk(t) // --journal-dir: its files, before its reader runs
	if ts.Running {
		// Non-blocking already (the flag belongs to the open file, which
		// the exec kept); made sure of, since only then does NewFile put
		// it in the poller, which the reader's deadlines need.
		unix.SetNonblock(ts.Master, true)
		master := os.NewFile(uintptr(ts.Master), ts.PTS)
		proc, err := ptyhost.Adopt(ts.Pid, master, ts.PTS)
		if err != nil {
			// Without a handle on the child we cannot tell its end:
			// closing the master hangs it up, and it is reported
			// exited with no status.
			s.logf("terminal %q: cannot adopt pid %d: %v; hanging it up", ts.ID, ts.Pid, err)
			master.Close()
			t.life, t.exit = engine.Reaped, proto.Exit{TerminalID: ts.ID}
			// It is still our child: reaped in the background, so that
			// it does not stay a zombie for the server's lifetime.
			go unix.Wait4(ts.Pid, nil, 0, nil)
		} else {
			t.proc = proc
		}
	}
	if t.proc == nil {
		t.readEnded = true
	}
	s.mu.Lock()
	s.terms[t.id] = t
	s.reserved += int64(t.quota)
	s.mu.Unlock()
	// Read before the reader starts: it sets readEnded when it ends.
	readEnded := t.readEnded
	if readEnded {
		close(t.readDone)
	} else {
		go t.readLoop()
	}
	if t.proc != nil {
		go t.supervise()
	} else {
		close(t.reaped)
	}
	go t.pump()
	if readEnded {
		t.input.Discard()
	} else {
		t.startInput() // and the writer at once if input was handed over
	}
	until := func(at time.Time, d time.Duration) time.Duration {
		if at.IsZero() {
			return d
		}
		return max(time.Until(at), 0)
	}
	t.mu.Lock()
	if t.life == engine.Closing {
		t.killAt = time.Now().Add(until(ts.KillAt, engine.CloseGrace))
		t.killer = time.AfterFunc(until(ts.KillAt, engine.CloseGrace), t.kill)
	}
	if l := ts.DiskLater; l != nil && s.disk != nil {
		t.diskLater = &diskLater{meta: l.Meta, at: time.Now(), why: l.Why}
	}
	// Every connection ended with the upgrade: the orphan clock runs on.
	t.orphan.ms, t.orphan.closed = ts.OrphanMs, ts.OrphanClosed
	s.orphanedForLocked(t, until(ts.OrphanAt, s.orphanTimeout(ts.OrphanMs)))
	// Under the lock: the supervisor started above may reap meanwhile.
	exited, written := t.exitedLocked(), t.end == exitWritten
	t.mu.Unlock()
	if exited {
		d := until(ts.KeepAt, s.opts.KeepExited)
		if written {
			s.keepFinishedFor(t, d)
		} else {
			s.keepExitedFor(t, d)
		}
	}
}
