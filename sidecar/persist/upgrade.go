//go:build unix

package persist

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"golang.org/x/sys/unix"
)

// A live upgrade replaces the server's binary without its terminals
// noticing. Only a process's parent can wait for a child and learn its
// exit status, so the terminals cannot move to another process: the
// server re-executes itself (execve keeps the pid, the children and every
// descriptor without close-on-exec) as the new binary, which reads the
// state this one wrote and takes up where it stopped.
//
// The steps (Server.upgrade): open the new binary once and refuse unless
// that file proves it is a ptyplex-sidecar reading our handover format
// (openCandidate: its build info and a compiled-in mark); stop
// accepting; freeze every terminal (term.frozen: no reads, no input
// writes, no reaping); end every other connection; write the state, a
// JSON header and the journals, into an anonymous file; hand the
// descriptors over (on Linux to a non-dumpable keeper, keeper_linux.go,
// so that only its socket crosses the execve; else, and to a binary
// without the keeper's mark, by clearing their close-on-exec flag); send
// UPGRADING; execve the file that was checked.
// If execve fails, everything is undone and the server goes on.

// upgrade carries out UPGRADE for c. It returns only when the upgrade was
// refused or failed, after telling c why; the server then goes on as
// before.
func (s *Server) upgrade(c *conn, body []byte) {
	var u proto.Upgrade
	if err := json.Unmarshal(body, &u); err != nil || !filepath.IsAbs(u.Path) {
		c.errorf("", "malformed UPGRADE: want {\"path\": \"/absolute/path/of/the/new/binary\", \"version\": ...}")
		return
	}
	s.mu.Lock()
	busy := ""
	switch {
	case s.stopping:
		busy = "the server is stopping"
	case s.upgrading:
		busy = "another upgrade is under way"
	case s.ln == nil:
		busy = "the server is not listening yet"
	}
	if busy == "" {
		s.upgrading = true
	}
	s.mu.Unlock()
	if busy != "" {
		c.errorf("", "UPGRADE refused: %s", busy)
		return
	}
	// The flag goes down before the answer: a peer that asks again as
	// soon as it has the refusal must not find the upgrade under way.
	msg := s.tryUpgrade(c, u)
	s.mu.Lock()
	s.upgrading = false
	s.mu.Unlock()
	c.errorf("", "%s", msg)
}

// tryUpgrade checks who asks and what it names, then hands over; it
// returns only when the upgrade was refused or failed, with the answer.
func (s *Server) tryUpgrade(c *conn, u proto.Upgrade) string {
	// A program in one of our terminals must not replace the server that
	// holds every terminal's journal and PTY master: the binary it names
	// would read them all. Only a program from outside may upgrade.
	var sids []int
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.pid > 0 {
			sids = append(sids, t.pid)
		}
		t.mu.Unlock()
	}
	if pid, inside, err := insideTerminal(c.peer, sids); inside || err != nil {
		why := fmt.Sprintf("it was asked from inside one of this server's terminals (pid %d); run the upgrade from outside them", pid)
		if err != nil {
			why = fmt.Sprintf("cannot tell who asked: %v", err)
		}
		s.logf("upgrade to %s refused: %s", u.Path, why)
		return "UPGRADE refused: " + why
	}
	bin, to, err := openCandidate(u.Path)
	if err != nil {
		s.logf("upgrade to %s (asked by %q) refused: %v", u.Path, u.Version, err)
		return fmt.Sprintf("UPGRADE refused: %v", err)
	}
	if err := bin.tryFlags(s.trialArgs(bin)); err != nil {
		bin.Close()
		s.logf("upgrade to %s (asked by %q) refused: %v", u.Path, u.Version, err)
		return fmt.Sprintf("UPGRADE refused: %v", err)
	}
	s.logf("upgrading to %s (version %s, handover format %d)", u.Path, to, HandoverFormat)
	err = s.handover(c, bin, to)
	bin.Close()
	s.logf("upgrade to %s failed, going on as before: %v", u.Path, err)
	return fmt.Sprintf("UPGRADE failed: %v (the server goes on as before)", err)
}

// handover freezes the server and executes path in its place; it returns
// only if that failed, after undoing the freeze.
func (s *Server) handover(c *conn, bin *candidate, to string) (err error) {
	path := bin.Name()
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	// The listening socket goes on in the new image: a duplicate of it
	// is handed over, and the Go listener, which owns the original, is
	// closed so that Serve stops accepting (and the path stays).
	lnFD, err := dupCloexec(ln)
	if err != nil {
		return fmt.Errorf("duplicate the listener: %w", err)
	}
	s.mu.Lock()
	s.relisten = make(chan *net.UnixListener, 1)
	s.mu.Unlock()
	ln.SetUnlinkOnClose(false)
	ln.Close()
	var handed []int // descriptors whose close-on-exec flag was cleared
	frozen, released := false, false
	defer func() {
		if err == nil {
			return
		}
		for _, fd := range handed {
			unix.CloseOnExec(fd)
		}
		if frozen {
			for _, t := range s.snapshotTerms() {
				t.unfreeze()
			}
		}
		if released {
			if err := s.restartWatchdog(); err != nil {
				s.logf("running without a watchdog: %v", err)
			}
		}
		s.restoreListener(lnFD)
	}()

	// Freeze first, so that INPUT a closing connection is still
	// dispatching cannot wait for a frozen child; then end every other
	// connection and wait until their goroutines have; then freeze the
	// terminals an OPEN made meanwhile.
	frozen = true
	for _, t := range s.snapshotTerms() {
		if err := t.freeze(); err != nil {
			return err
		}
	}
	if err := s.closeConns(c); err != nil {
		return err
	}
	s.detachAll(c)
	terms := s.snapshotTerms()
	for _, t := range terms {
		if err := t.freeze(); err != nil {
			return err
		}
	}

	st := s.stateHeader(lnFD, lockFD())
	size, queued := 0, 0
	for _, t := range terms {
		ts, err := t.state()
		if err != nil {
			return err
		}
		st.Terms = append(st.Terms, ts)
		size += int(ts.End - ts.Start)
		for _, b := range ts.Input {
			queued += len(b)
		}
	}
	sf, err := stateFile()
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	defer sf.Close() // reached only if we are still this image
	if err := writeState(sf, st, terms); err != nil {
		return fmt.Errorf("write the state (%d bytes of journals): %w", size, err)
	}
	stateFD, err := fileFD(sf)
	if err != nil {
		return err
	}
	exe := selfExe()
	if exe != nil {
		defer exe.Close()
	}
	exeFD := -1
	if exe != nil {
		exeFD, _ = fileFD(exe)
	}

	// Every descriptor the state names, by its number here.
	fds := []int{lnFD}
	if st.Lock >= 0 {
		fds = append(fds, st.Lock)
	}
	for _, ts := range st.Terms {
		if ts.Master >= 0 {
			fds = append(fds, ts.Master)
		}
	}
	args := append([]string{path}, s.opts.Args...)
	if keepers && bin.keeper {
		// Through a keeper (keeper_linux.go): only its socket crosses
		// the execve.
		k, kerr := startKeeper(s.logf)
		if kerr != nil {
			return kerr
		}
		defer func() { // err: handover's result
			if err != nil {
				k.stop()
			}
		}()
		tags := []string{"state"}
		all := []int{stateFD}
		if exeFD >= 0 {
			tags, all = append(tags, "exe"), append(all, exeFD)
		}
		for _, fd := range fds {
			tags, all = append(tags, strconv.Itoa(fd)), append(all, fd)
		}
		if kerr := k.give(tags, all); kerr != nil {
			return fmt.Errorf("hand the descriptors to the keeper: %w", kerr)
		}
		if kerr := k.watch(s.liveIdentities()); kerr != nil {
			return fmt.Errorf("tell the keeper the terminals: %w", kerr)
		}
		args = append(args, "--resume-keeper", strconv.Itoa(k.fd))
		fds = []int{k.fd}
	} else {
		// By inheritance: what an older binary, or a platform without
		// /proc/PID/fd, takes.
		fds = append(fds, stateFD)
		args = append(args, "--resume-fd", strconv.Itoa(stateFD))
		if exeFD >= 0 {
			fds = append(fds, exeFD)
			args = append(args, "--resume-exe", strconv.Itoa(exeFD))
		}
	}
	// Every terminal is frozen, every connection but c is closed: say so
	// and go. The exec closes c (close-on-exec), which is how the
	// upgrader learns that the new image is starting.
	c.writeJSON(proto.TypeUpgrading, proto.Upgrading{From: version.Version, Terminals: len(st.Terms), To: to})
	s.logf("handing %s (%d journal bytes, %d bytes of input queued for them) to %s", Terminals(len(st.Terms)), size, queued, path)
	for _, fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("clear close-on-exec of descriptor %d: %w", fd, err)
		}
		handed = append(handed, fd)
	}
	// The execve closes the descriptors of finished journal segments
	// that wait for the fsync loop's next round (diskjournal.go): that
	// round is now, or the new image would never sync them.
	if s.disk != nil {
		s.disk.syncAll()
	}
	// The execve closes the watchdog's pipe: it is told goodbye first,
	// so that it does not take that for our death (watchdog.go).
	released = true
	s.releaseWatchdog()
	err = execCandidate(bin, args)
	return fmt.Errorf("execve %s: %w", path, err)
}

// closeConns closes every connection but keep and waits until their
// goroutines have detached their terminals and ended.
func (s *Server) closeConns(keep *conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c != keep {
			c.close("the server is upgraded")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	timer := time.AfterFunc(10*time.Second, func() {
		s.mu.Lock()
		s.connGone.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	for len(s.conns) > 1 || (len(s.conns) == 1 && !hasConn(s.conns, keep)) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d connections did not end within 10s", len(s.conns)-1)
		}
		s.connGone.Wait()
	}
	return nil
}

func hasConn(m map[*conn]struct{}, c *conn) bool { _, ok := m[c]; return ok }

// restoreListener makes a listener of the duplicate handed over and gives
// it to Serve: the upgrade was rolled back.
func (s *Server) restoreListener(fd int) {
	f := os.NewFile(uintptr(fd), "listener")
	l, err := net.FileListener(f)
	f.Close()
	var ul *net.UnixListener
	if err == nil {
		ul = l.(*net.UnixListener)
	} else {
		s.logf("upgrade rollback: listening again: %v; ending", err)
	}
	s.mu.Lock()
	w := s.relisten
	s.relisten = nil
	s.ln = ul
	s.mu.Unlock()
	if ul == nil {
		go s.Shutdown()
	}
	if w != nil {
		w <- ul
	}
}

// dupCloexec duplicates the listener's descriptor (close-on-exec, until
// the handover clears it).
func dupCloexec(ln *net.UnixListener) (int, error) {
	rc, err := ln.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return nfd, derr
}

// fileFD is f's descriptor number, without os.File.Fd's switch to
// blocking mode.
func fileFD(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	n := -1
	if err := rc.Control(func(fd uintptr) { n = int(fd) }); err != nil {
		return -1, err
	}
	return n, nil
}

// lockFD is the lock file's descriptor, -1 if we hold none (tests).
func lockFD() int {
	if keepLock == nil {
		return -1
	}
	fd, err := fileFD(keepLock)
	if err != nil {
		return -1
	}
	return fd
}

// freezeBound is how long a terminal's reader and input writer have to
// stop once their PTY calls were interrupted; they take microseconds.
const freezeBound = 5 * time.Second

// freeze stops t's reader and input writer where every byte is either in
// the journal or in its input queue, and keeps its supervisor from
// reaping. Input written from now on is queued whatever the bounds.
func (t *term) freeze() error {
	t.mu.Lock()
	if t.frozen {
		t.mu.Unlock()
		return nil
	}
	t.frozen = true
	t.broadcastLocked()
	proc := t.proc
	t.mu.Unlock()
	// No direct write from now on, nothing taken by the writer; INPUT
	// is queued whatever the bounds.
	t.input.Freeze()
	if proc != nil {
		// Reads and writes in progress return now; both loops then see
		// frozen and wait. (Errors: the PTY was closed, after a reap.)
		past := time.Unix(1, 0)
		proc.SetReadDeadline(past)
		proc.SetWriteDeadline(past)
	}
	deadline := time.Now().Add(freezeBound)
	wake := time.AfterFunc(freezeBound, func() {
		t.mu.Lock()
		t.broadcastLocked()
		t.mu.Unlock()
	})
	defer wake.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.reading || t.input.Writing() {
		if time.Now().After(deadline) {
			// Frozen all the same: the rollback unfreezes it.
			return fmt.Errorf("terminal %q did not stop reading and writing within %v", t.id, freezeBound)
		}
		t.cond.Wait()
	}
	return nil
}

// unfreeze undoes freeze: an upgrade was rolled back.
func (t *term) unfreeze() {
	t.mu.Lock()
	proc := t.proc
	t.mu.Unlock()
	if proc != nil {
		proc.SetReadDeadline(time.Time{})
		proc.SetWriteDeadline(time.Time{})
	}
	t.mu.Lock()
	t.frozen = false
	t.broadcastLocked()
	t.mu.Unlock()
	t.input.Unfreeze()
}

// trialArgs are the arguments handover starts bin with, the descriptor
// numbers given as 3 and 4: what the candidate's trial run (tryFlags)
// parses. They must name the same flags as handover's.
func (s *Server) trialArgs(bin *candidate) []string {
	args := append([]string(nil), s.opts.Args...)
	if keepers && bin.keeper {
		return append(args, "--resume-keeper", "3")
	}
	args = append(args, "--resume-fd", "3")
	if runtime.GOOS == "linux" {
		args = append(args, "--resume-exe", "4")
	}
	return args
}

// liveIdentities names the processes of every terminal whose child has
// not been reaped, as the watchdog knows them.
func (s *Server) liveIdentities() []ptyhost.Identity {
	var live []ptyhost.Identity
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.proc != nil && !t.exitedLocked() { // a reaped pid may be another's now
			live = append(live, t.proc.Identity())
		}
		t.mu.Unlock()
	}
	return live
}
