package persist

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
	"golang.org/x/sys/unix"
)

// A live upgrade must not carry the terminals' PTY masters and the state
// (every journal) across execve as inherited descriptors: the new image
// is dumpable from the execve until its main makes it non-dumpable, and
// in that window any process of our user (a program in one of our
// terminals) could open them through /proc/SERVER/fd/N.
//
// So they go through a keeper: before the exec, the server starts its
// own binary again as a small process (--persist-keeper, a hidden flag),
// which makes itself non-dumpable first thing and only then says ready;
// the server passes it every descriptor to hand over (SCM_RIGHTS) and
// executes the new image with nothing but its end of the socket pair to
// the keeper (a socket: /proc/PID/fd cannot open one). The new image,
// non-dumpable by then, asks the keeper for them (Reclaim) and, once it
// has taken the state over, lets it go (Release). If it cannot take the
// state over, it executes the previous binary with the same socket,
// which asks again. The keeper ends when the socket's other end closes
// (the server died): the masters close with it and the children get the
// hangup, as they would have.
//
// The messages (SOCK_SEQPACKET, so each carries its own descriptors):
// keeper "ready"; server "fds TAG..." with one descriptor per tag (at
// most keeperBatch a message), then "end"; keeper "kept N PID"; later
// the new image "give"; keeper "fds TAG..." ..., then "end N PID"; the
// new image "done".

// KeeperFlag is the hidden flag that makes the sidecar binary a keeper.
const KeeperFlag = "--persist-keeper"

// keeperBatch is how many descriptors one message carries (the kernel
// takes at most 253).
const keeperBatch = 200

// keeperBound is how long each step of the exchange may take.
const keeperBound = 10 * time.Second

// IsKeeper reports whether args (without the program name) ask for the
// keeper.
func IsKeeper(args []string) bool { return len(args) == 1 && args[0] == KeeperFlag }

// Keep is the keeper process: it serves the socket at descriptor 3 and
// returns its exit status.
func Keep() int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar keeper: "+format+"\n", args...)
		return 1
	}
	// The descriptors it is about to hold are the terminals' PTY masters
	// and their journals: it must be non-dumpable before it says ready
	// (main made it so, before anything else).
	if inspectable() {
		return fail("dumpable: refusing to keep descriptors")
	}
	c, err := keeperConn(3)
	if err != nil {
		return fail("%v", err)
	}
	defer c.Close()
	if err := sendMsg(c, "ready", nil); err != nil {
		return fail("%v", err)
	}
	tags, fds, _, err := recvSet(c, "")
	if err != nil {
		return fail("taking the descriptors: %v", err)
	}
	if err := sendMsg(c, fmt.Sprintf("kept %d %d", len(fds), os.Getpid()), nil); err != nil {
		return fail("%v", err)
	}
	var live []ptyhost.Identity
	for {
		msg, _, err := recvMsg(c, time.Time{})
		if err != nil {
			// The server is gone before an image took the terminals
			// over (the new one died at its start, and the previous
			// one could not be executed again): so are the terminals.
			// The masters close with us and the children get the
			// hangup; the watchdog that would have ended the programs
			// that ignore it was told goodbye before the execve, so
			// that is done here.
			if len(live) > 0 {
				fmt.Fprintf(os.Stderr, "ptyplex-sidecar keeper: the server ended before it took its %s over; ending their processes\n", Terminals(len(live)))
				if !ptyhost.KillAllIdentified(live, 50) {
					return fail("processes of %d terminals still alive after 50 passes", len(live))
				}
			}
			return 0
		}
		if lines, ok := strings.CutPrefix(msg, "live\n"); ok {
			for _, l := range strings.Split(lines, "\n") {
				if id, err := ptyhost.ParseIdentity(l); err == nil {
					live = append(live, id)
				}
			}
			continue
		}
		switch msg {
		case "give":
			if err := sendSet(c, tags, fds, fmt.Sprintf("end %d %d", len(fds), os.Getpid())); err != nil {
				return fail("giving the descriptors back: %v", err)
			}
		case "done":
			return 0
		}
	}
}

// keeper is the server's side of a keeper it started.
type keeper struct {
	cmd  *exec.Cmd
	c    *net.UnixConn
	file *os.File // c's descriptor, which the exec hands over
	fd   int
}

// keepers says that this platform hands descriptors over through a keeper.
const keepers = true

// startKeeper starts our own binary as a keeper and waits until it says
// it is ready (non-dumpable).
func startKeeper(logf func(string, ...any)) (*keeper, error) {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket pair: %w", err)
	}
	theirs := os.NewFile(uintptr(sp[1]), "keeper")
	cmd := exec.Command("/proc/self/exe", KeeperFlag)
	cmd.Args[0] = os.Args[0]            // named as we are (ps, pgrep -x), not "exe"
	cmd.ExtraFiles = []*os.File{theirs} // descriptor 3
	cmd.Stderr = os.Stderr              // the server's log
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		unix.Close(sp[0])
		return nil, fmt.Errorf("start the keeper: %w", err)
	}
	go cmd.Wait() // reaped by this image if it goes on; see Release otherwise
	k := &keeper{cmd: cmd, fd: sp[0], file: os.NewFile(uintptr(sp[0]), "keeper")}
	fc, err := net.FileConn(k.file)
	if err != nil {
		k.stop()
		return nil, fmt.Errorf("the keeper's socket: %w", err)
	}
	k.c = fc.(*net.UnixConn)
	if msg, _, err := recvMsg(k.c, time.Now().Add(keeperBound)); err != nil || msg != "ready" {
		k.stop()
		return nil, fmt.Errorf("the keeper did not say ready (%q): %v", msg, err)
	}
	return k, nil
}

// give passes fds, each named by its tag, to the keeper and waits until
// it has them.
func (k *keeper) give(tags []string, fds []int) error {
	if err := sendSet(k.c, tags, fds, "end"); err != nil {
		return err
	}
	msg, _, err := recvMsg(k.c, time.Now().Add(keeperBound))
	if err != nil {
		return err
	}
	if f := strings.Fields(msg); len(f) != 3 || f[0] != "kept" || f[1] != strconv.Itoa(len(fds)) {
		return fmt.Errorf("the keeper answered %q, want kept %d", msg, len(fds))
	}
	return nil
}

// watch tells the keeper which terminals' processes to end if the
// server dies before an image has taken them over (see Keep): the
// watchdog's job, which it can no longer do once told goodbye.
func (k *keeper) watch(live []ptyhost.Identity) error {
	const batch = 400 // lines of at most about 100 bytes: within recvMsg's 64 KiB
	for i := 0; i < len(live); i += batch {
		var b strings.Builder
		b.WriteString("live")
		for _, id := range live[i:min(i+batch, len(live))] {
			b.WriteString("\n" + id.String())
		}
		if err := sendMsg(k.c, b.String(), nil); err != nil {
			return err
		}
	}
	return nil
}

// stop ends the keeper (the upgrade was rolled back): it is told done
// first, so that it leaves the terminals alone, then closing our end of
// the socket ends it, and the descriptors it held with it.
func (k *keeper) stop() {
	if k.c != nil {
		sendMsg(k.c, "done", nil)
		k.c.Close()
	}
	k.file.Close()
	if k.cmd.Process != nil {
		k.cmd.Process.Kill()
	}
}

// Reclaimed is what a new image got back from the keeper: the
// descriptors by the tags they were handed over with.
type Reclaimed struct {
	FDs  map[string]int
	pid  int
	conn *net.UnixConn
	fd   int
}

// Reclaim asks the keeper at descriptor fd (--resume-keeper) for the
// descriptors. The caller must be non-dumpable already: they are the
// PTY masters and the state.
func Reclaim(fd int) (*Reclaimed, error) {
	if inspectable() {
		return nil, errors.New("this process is dumpable: not taking the terminals' descriptors")
	}
	// A duplicate, so that the descriptor number itself stays open (not
	// close-on-exec) for the previous binary if we go back to it.
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the keeper's socket (descriptor %d): %w", fd, err)
	}
	f := os.NewFile(uintptr(dup), "keeper")
	fc, err := net.FileConn(f) // a duplicate of its own
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("the keeper's socket (descriptor %d): %w", fd, err)
	}
	c := fc.(*net.UnixConn)
	if err := sendMsg(c, "give", nil); err != nil {
		c.Close()
		return nil, err
	}
	tags, fds, pid, err := recvSet(c, "end")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("from the keeper: %w", err)
	}
	r := &Reclaimed{FDs: make(map[string]int, len(fds)), conn: c, fd: fd}
	for i, t := range tags {
		r.FDs[t] = fds[i]
	}
	r.pid = pid
	return r, nil
}

// Release tells the keeper that the state was taken over: it ends, and
// is reaped here (it is our child: the previous image started it). The
// keeper's socket is closed; the descriptors taken over are the
// caller's.
func (r *Reclaimed) Release() {
	sendMsg(r.conn, "done", nil)
	r.conn.Close()
	unix.Close(r.fd)
	if r.pid > 0 {
		go unix.Wait4(r.pid, nil, 0, nil)
	}
}

// Drop closes the reclaimed descriptors (the caller goes back to the
// previous binary, which reclaims them again).
func (r *Reclaimed) Drop() {
	r.conn.Close()
	for _, fd := range r.FDs {
		unix.Close(fd)
	}
}

func keeperConn(fd int) (*net.UnixConn, error) {
	f := os.NewFile(uintptr(fd), "keeper")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("descriptor %d: %w", fd, err)
	}
	c, ok := fc.(*net.UnixConn)
	if !ok {
		fc.Close()
		return nil, fmt.Errorf("descriptor %d is not a Unix socket", fd)
	}
	return c, nil
}

func sendMsg(c *net.UnixConn, msg string, fds []int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	c.SetWriteDeadline(time.Now().Add(keeperBound))
	_, _, err := c.WriteMsgUnix([]byte(msg), oob, nil)
	return err
}

// recvMsg reads one message and the descriptors it carries
// (close-on-exec: Go asks for MSG_CMSG_CLOEXEC).
func recvMsg(c *net.UnixConn, deadline time.Time) (string, []int, error) {
	c.SetReadDeadline(deadline)
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*keeperBatch))
	n, oobn, flags, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return "", nil, err
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return "", nil, err
		}
		for i := range msgs {
			got, err := unix.ParseUnixRights(&msgs[i])
			if err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if n == 0 && oobn == 0 {
		return "", nil, errors.New("the other end closed")
	}
	if flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return "", nil, errors.New("a message was cut short")
	}
	return string(buf[:n]), fds, nil
}

// sendSet sends fds with their tags, keeperBatch at a time, then last.
func sendSet(c *net.UnixConn, tags []string, fds []int, last string) error {
	for i := 0; i < len(fds); i += keeperBatch {
		j := min(i+keeperBatch, len(fds))
		if err := sendMsg(c, "fds "+strings.Join(tags[i:j], " "), fds[i:j]); err != nil {
			return err
		}
	}
	return sendMsg(c, last, nil)
}

// recvSet reads "fds" messages until one that starts with end (any
// message, if end is empty and it is not "fds ..."); pid is the one an
// "end N PID" names. It closes what it got on failure.
func recvSet(c *net.UnixConn, end string) (tags []string, fds []int, pid int, err error) {
	defer func() {
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
	}()
	deadline := time.Now().Add(keeperBound)
	for {
		msg, got, err := recvMsg(c, deadline)
		fds = append(fds, got...)
		if err != nil {
			return nil, fds, 0, err
		}
		if t, ok := strings.CutPrefix(msg, "fds "); ok {
			ts := strings.Fields(t)
			if len(ts) != len(got) {
				return nil, fds, 0, fmt.Errorf("%d tags for %d descriptors", len(ts), len(got))
			}
			tags = append(tags, ts...)
			continue
		}
		if len(got) > 0 {
			return nil, fds, 0, fmt.Errorf("descriptors with %q", msg)
		}
		if f := strings.Fields(msg); len(f) == 3 && f[0] == end {
			if f[1] != strconv.Itoa(len(fds)) {
				return nil, fds, 0, fmt.Errorf("%q after %d descriptors", msg, len(fds))
			}
			pid, _ = strconv.Atoi(f[2])
			return tags, fds, pid, nil
		}
		if end == "" || msg == end {
			return tags, fds, 0, nil
		}
		return nil, fds, 0, fmt.Errorf("unexpected %q", msg)
	}
}
