//go:build unix

package persist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/lockwait"
	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// The servers' sockets live in a directory of the session registry's
// (wire.RegistryDir: $PTYPLEX_RUNTIME_DIR, $XDG_RUNTIME_DIR/ptyplex or
// /tmp/ptyplex-UID), in a subdirectory that must be ours and 0700, so that
// nobody else can reach a socket, plant one, or swap a name under us.

// CheckName refuses a server name that could not be a plain file name.
func CheckName(name string) error {
	if !plainName(name) {
		return fmt.Errorf("persistent sidecar name %q: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-'", name)
	}
	return nil
}

// plainName says whether name is 1 to 64 of [A-Za-z0-9._-], not starting
// with '.' or '-'. (Checked by hand: package regexp, for this alone, was
// 150 KiB of the server's binary, resident: docs/persist.md.)
func plainName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '.' || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Dir returns the private directory of this user's persistent servers,
// creating it if need be.
func Dir() (string, error) {
	base, err := wire.RegistryDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "sidecar")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("persistent sidecar directory: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", fmt.Errorf("persistent sidecar directory: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("persistent sidecar directory %s: refusing it: it must be a directory of uid %d with mode 0700 (it is uid %d, mode %o)", dir, os.Geteuid(), st.Uid, st.Mode&0o7777)
	}
	return dir, nil
}

// Paths returns the socket, lock and log file of server name.
func Paths(name string) (sock, lock, logFile string, err error) {
	if err := CheckName(name); err != nil {
		return "", "", "", err
	}
	dir, err := Dir()
	if err != nil {
		return "", "", "", err
	}
	sock = filepath.Join(dir, name+".sock")
	if err := wire.CheckSocketPath(sock); err != nil {
		return "", "", "", err
	}
	return sock, filepath.Join(dir, name+".lock"), filepath.Join(dir, name+".log"), nil
}

// ErrRunning says another server of that name holds its lock.
var ErrRunning = errors.New("a persistent sidecar of that name is already running")

// Listen takes server name's lock and listens on its socket. The lock,
// held for as long as the process lives, is what makes two servers
// started at once end as one: the second finds it taken and gets
// ErrRunning, before touching the socket.
func Listen(name string) (*net.UnixListener, error) {
	sock, lock, _, err := Paths(name)
	if err != nil {
		return nil, err
	}
	lf, err := safefile.OpenAppend(lock)
	if err != nil {
		return nil, fmt.Errorf("lock of persistent sidecar %q: %w", name, err)
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lf.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("lock %s: %w", lock, err)
	}
	// lf stays open (and locked) until we exit; it is not inherited by
	// the terminals (os.OpenFile sets close-on-exec).
	keepLock = lf
	// With the lock held, a socket left at the path is a dead server's.
	if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket %s: %w", sock, err)
	}
	// The umask makes the socket 0600 at bind time; there is no chmod by
	// name afterwards (see the session daemon's listen for why).
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", sock, err)
	}
	return ln, nil
}

var keepLock *os.File

// WaitGone waits until the process of server name has ended, that is
// until its lock is free (a server holds it until its process ends, a
// moment after it closed its connections at a stop), or until deadline.
// was is MarkServer's mark of the server as it was before the stop: a
// server of that name listening on another socket (a host's reconnect
// started it once the lock was free, and holds the lock now) says so too.
func WaitGone(name string, deadline time.Time, was lockwait.Mark) error {
	sock, lock, _, err := Paths(name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := lockwait.FreeOr(ctx, lock, func() bool { return was.Replaced(sock) }); err != nil {
		if errors.Is(err, lockwait.ErrHeld) {
			return fmt.Errorf("persistent sidecar %q ended its terminals and connections, but its process still runs", name)
		}
		return fmt.Errorf("persistent sidecar %q: %w", name, err)
	}
	return nil
}

// MarkServer marks the socket server name listens on now, for WaitGone.
func MarkServer(name string) lockwait.Mark {
	sock, _, _, err := Paths(name)
	if err != nil {
		return lockwait.Mark{}
	}
	return lockwait.MarkOf(sock)
}

// Dial connects to server name, refusing a server that is not our user.
func Dial(name string) (*net.UnixConn, error) {
	sock, _, _, err := Paths(name)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("connect to persistent sidecar %q: %w", name, err)
	}
	uid, err := wire.PeerUID(c)
	if err != nil || uid != uint32(os.Geteuid()) {
		c.Close()
		return nil, fmt.Errorf("refusing persistent sidecar %q at %s: it is served by uid %d, not by us (uid %d): %v", name, sock, uid, os.Geteuid(), err)
	}
	return c, nil
}

// notRunning says a dial failed because no server listens.
func notRunning(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// NotRunning reports whether err from Dial means that no server runs.
func NotRunning(err error) bool { return notRunning(err) }

// startBound is how long Connect waits for a server it started to listen.
const startBound = 10 * time.Second

// restartEvery bounds how often Connect starts a server again while the
// lock is held by one that no longer listens (start).
const restartEvery = 100 * time.Millisecond

// Connect dials server name, first starting it in the background (exe
// with serveArgs, in a session of its own, stderr to its log file) when
// none runs; started says whether this call started the one it reached.
// Two callers doing this at once start two servers, of which one takes
// the lock and the other exits; both then reach the first.
func Connect(name, exe string, serveArgs []string) (c *net.UnixConn, started bool, err error) {
	c, err = Dial(name)
	if err == nil || !notRunning(err) {
		return c, false, err
	}
	c, err = start(name, exe, serveArgs)
	return c, err == nil, err
}

// start starts server name and dials it once it listens.
func start(name, exe string, serveArgs []string) (*net.UnixConn, error) {
	_, _, logFile, err := Paths(name)
	if err != nil {
		return nil, err
	}
	lf, err := safefile.OpenAppend(logFile)
	if err != nil {
		return nil, fmt.Errorf("log of persistent sidecar %q: %w", name, err)
	}
	// What this server logs starts here: its last line says why it ended,
	// if it fails.
	logStart, _ := lf.Seek(0, io.SeekEnd)
	run := func() (chan error, error) {
		cmd := exec.Command(exe, serveArgs...)
		cmd.Stderr = lf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start persistent sidecar %q: %w", name, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return exited, nil
	}
	defer lf.Close()
	exited, err := run()
	if err != nil {
		return nil, err
	}
	// again says the server started found the lock taken and left (exit
	// 0), and nobody listened at the dial after that; started is when
	// the last one was started.
	again, started := false, time.Now()
	deadline := time.Now().Add(startBound)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		c, err := Dial(name)
		if err == nil || !notRunning(err) {
			return c, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("persistent sidecar %q did not start listening within %v (see %s)", name, startBound, logFile)
		}
		if again && time.Since(started) >= restartEvery {
			// The lock's holder listens no more: a server going away
			// (asked to stop, or ending on a signal) holds its lock
			// until its process ends, after it closed its listener. A
			// winner of a race between two bridges would listen by
			// now. Start one again: once that one is gone, ours takes
			// the lock. (Before, the bridge waited out startBound and
			// failed: --stop, then a bridge at once, failed so.)
			again, started = false, time.Now()
			if exited, err = run(); err != nil {
				return nil, err
			}
		}
		select {
		case werr := <-exited:
			// It lost the race for the lock (exit 0): the winner is
			// about to listen, or is a server going away (above); or
			// it failed, which is worth saying.
			if werr != nil {
				why := ""
				if line := lastLogLine(logFile, logStart); line != "" {
					why = ": " + line
				}
				return nil, fmt.Errorf("persistent sidecar %q failed to start (%w)%s (see %s)", name, werr, why, logFile)
			}
			exited, again = nil, true
		case <-time.After(pause):
		}
	}
}

// lastLogLine is the last line written to the log file at path after
// offset from, without its timestamp, cut to a line's worth: what a
// server that failed to start said last.
func lastLogLine(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const bound = 4096
	if fi, err := f.Stat(); err == nil && fi.Size()-from > bound {
		from = fi.Size() - bound
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, from, bound))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	// "ptyplex-sidecar[NAME]: 2006/01/02 15:04:05.000000 message"
	if _, rest, ok := strings.Cut(line, "]: "); ok {
		if f := strings.SplitN(rest, " ", 3); len(f) == 3 && strings.Count(f[0], "/") == 2 && strings.Count(f[1], ":") == 2 {
			line = f[2]
		}
	}
	return line
}
