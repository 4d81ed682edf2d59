//go:build unix

package persist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/sidecar/engine"
	"golang.org/x/sys/unix"
)

// Resume builds the server a previous image of this process handed over
// (see upgrade.go): stateFD is the state file it wrote. opts' Log, Name
// and Args are used; the journal options come from the state.
//
// Resume first reads and checks everything without changing a
// descriptor; an error from that part means nothing was touched, and the
// caller may hand the same state to another binary (the previous one).
// After it, a terminal that cannot be adopted is reported exited, and
// everything else goes on.
func Resume(opts Options, stateFD int) (*Server, *net.UnixListener, error) {
	st, journals, ln, mapped, err := readState(stateFD)
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
	for i, ts := range st.Terms {
		s.restore(ts, journals[i])
	}
	s.logf("took over %d terminals from version %s (handover format %d); this is version %s, pid %d",
		len(st.Terms), st.From, st.Format, version.Version, os.Getpid())
	return s, ln, nil
}

// readState reads the state file and checks it: the format, every
// descriptor it names, the journals' lengths. It changes nothing but
// a listener it makes of a duplicate of the handed-over one.
//
// The file is mapped, not read, so that the journals are not held a third
// time while they are copied into their rings; the caller unmaps it.
func readState(fd int) (st state, journals [][]byte, ln *net.UnixListener, mapped []byte, err error) {
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		return st, nil, nil, nil, fmt.Errorf("the state (descriptor %d): %w", fd, err)
	}
	if fst.Size == 0 {
		return st, nil, nil, nil, fmt.Errorf("the state (descriptor %d) is empty", fd)
	}
	all, err := unix.Mmap(fd, 0, int(fst.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return st, nil, nil, nil, fmt.Errorf("map the state (descriptor %d): %w", fd, err)
	}
	defer func() {
		if err != nil {
			unix.Munmap(all)
		}
	}()
	st, journals, ln, err = parseState(all)
	return st, journals, ln, all, err
}

func parseState(all []byte) (st state, journals [][]byte, ln *net.UnixListener, err error) {
	hdr, rest, ok := bytes.Cut(all, []byte("\n"))
	if !ok {
		return st, nil, nil, fmt.Errorf("the state has no header (%d bytes)", len(all))
	}
	var probe struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(hdr, &probe); err != nil {
		return st, nil, nil, fmt.Errorf("the state's header: %w", err)
	}
	if probe.Format != HandoverFormat {
		return st, nil, nil, fmt.Errorf("the state is in handover format %d; this binary reads format %d", probe.Format, HandoverFormat)
	}
	if err := json.Unmarshal(hdr, &st); err != nil {
		return st, nil, nil, fmt.Errorf("the state's header: %w", err)
	}
	open := func(what string, fd int) error {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return fmt.Errorf("%s: descriptor %d: %w", what, fd, err)
		}
		return nil
	}
	if err := open("listener", st.Listener); err != nil {
		return st, nil, nil, err
	}
	if st.Lock >= 0 {
		if err := open("lock", st.Lock); err != nil {
			return st, nil, nil, err
		}
	}
	seen := map[string]bool{}
	for _, ts := range st.Terms {
		if ts.ID == "" || seen[ts.ID] {
			return st, nil, nil, fmt.Errorf("terminal id %q is empty or twice in the state", ts.ID)
		}
		seen[ts.ID] = true
		n := ts.End - ts.Start
		if ts.End < ts.Start || ts.Quota < 1 || n > uint64(ts.Quota) || n > uint64(len(rest)) {
			return st, nil, nil, fmt.Errorf("terminal %q: journal [%d, %d) of %d bytes does not fit (%d bytes left in the state)", ts.ID, ts.Start, ts.End, ts.Quota, len(rest))
		}
		journals = append(journals, rest[:n:n])
		rest = rest[n:]
		if ts.Running {
			if ts.Pid <= 0 {
				return st, nil, nil, fmt.Errorf("terminal %q: pid %d", ts.ID, ts.Pid)
			}
			if err := open(fmt.Sprintf("terminal %q's PTY master", ts.ID), ts.Master); err != nil {
				return st, nil, nil, err
			}
		}
	}
	if len(rest) != 0 {
		return st, nil, nil, fmt.Errorf("%d bytes after the last journal in the state", len(rest))
	}
	// The listener last: of all the checks only it makes something.
	dup, err := unix.FcntlInt(uintptr(st.Listener), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return st, nil, nil, fmt.Errorf("listener: %w", err)
	}
	f := os.NewFile(uintptr(dup), "listener")
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return st, nil, nil, fmt.Errorf("listener: %w", err)
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return st, nil, nil, fmt.Errorf("listener: descriptor %d is a %T, not a Unix socket", st.Listener, l)
	}
	ul.SetUnlinkOnClose(false)
	return st, journals, ul, nil
}

// restore makes a term of ts and starts what it needs: the reader while
// the PTY has not ended, the supervisor while the child is not reaped,
// the input writer if input was queued, and the timers that were set.
func (s *Server) restore(ts termState, journal []byte) {
	t := &term{id: ts.ID, s: s, pid: ts.Pid, cmd: ts.Cmd, args: ts.Args, park: ts.Park, quota: ts.Quota,
		readDone: make(chan struct{}), reaped: make(chan struct{}), j: newJournal(ts.Quota),
		sent: ts.Sent, acked: ts.Acked, credit: ts.Credit, cols: ts.Cols, rows: ts.Rows,
		running: ts.Running, closing: ts.Closing, exited: ts.Exited, exit: ts.Exit, exitSent: ts.ExitSent,
		readEnded: ts.ReadEnded, inq: ts.Input}
	t.cond, t.incond = sync.NewCond(&t.mu), sync.NewCond(&t.mu)
	for _, b := range t.inq {
		t.inBytes += len(b)
	}
	s.input.Add(t.inBytes)
	t.j.start, t.j.end = ts.Start, ts.Start
	t.j.append(journal)
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
			t.running, t.exited, t.exit = false, true, proto.Exit{TerminalID: ts.ID}
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
	if t.readEnded {
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
	if len(t.inq) > 0 && !t.readEnded {
		t.inStart.Do(func() { go t.inputLoop() })
	}
	until := func(at time.Time, d time.Duration) time.Duration {
		if at.IsZero() {
			return d
		}
		return max(time.Until(at), 0)
	}
	t.mu.Lock()
	if t.closing && t.running {
		t.killAt = time.Now().Add(until(ts.KillAt, engine.CloseGrace))
		t.killer = time.AfterFunc(until(ts.KillAt, engine.CloseGrace), t.kill)
	}
	t.mu.Unlock()
	if t.exited {
		d := until(ts.KeepAt, s.opts.KeepExited)
		if t.exitSent {
			s.keepFinishedFor(t, d)
		} else {
			s.keepExitedFor(t, d)
		}
	}
}
