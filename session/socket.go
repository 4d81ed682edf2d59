//go:build unix

package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// listen opens the session socket: in a fresh 0700 directory when path is
// "", else at path (replacing a stale socket nobody listens on). The socket
// itself is 0600. It returns the listener, the socket path and, for an
// auto-generated socket, the directory to remove on STOP.
func listen(path string) (ln *net.UnixListener, sock, autoDir string, err error) {
	if path == "" {
		// Not os.TempDir: tooling expects /tmp/interminai-* whatever TMPDIR says.
		autoDir, err = os.MkdirTemp("/tmp", wire.AutoDirPrefix)
		if err != nil {
			return nil, "", "", fmt.Errorf("create socket directory: %w", err)
		}
		if err := os.Chmod(autoDir, 0o700); err != nil {
			os.Remove(autoDir)
			return nil, "", "", fmt.Errorf("create socket directory: %w", err)
		}
		path = filepath.Join(autoDir, "socket")
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, "", "", fmt.Errorf("socket path: %w", err)
		}
		if err := wire.CheckSocketPath(abs); err != nil {
			// A relative path in a directory whose absolute name is too
			// long for a socket address still fits as it is given, and
			// works for clients started in the same directory, as in
			// interminai: the kernel resolves it against our working
			// directory, which the daemon keeps.
			if filepath.IsAbs(path) || wire.CheckSocketPath(path) != nil {
				return nil, "", "", err
			}
			abs = filepath.Clean(path)
		}
		path = abs
		if err := removeStale(path); err != nil {
			return nil, "", "", err
		}
	}
	// The umask decides the socket's mode at bind time (0777 &^ 0177 =
	// 0600), so there is no window in which another user could connect.
	// There is deliberately no chmod by name afterwards: in a directory
	// others may write, the name can be swapped for a symbolic link
	// between bind and chmod, and the chmod would land on the link's
	// target. (fchmod on a socket's descriptor does not reach the file.)
	old := syscall.Umask(0o177)
	ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		if autoDir != "" {
			os.RemoveAll(autoDir)
		}
		return nil, "", "", fmt.Errorf("listen on %s: %w", path, err)
	}
	// We remove the socket ourselves on STOP, and only when we made it.
	ln.SetUnlinkOnClose(false)
	if err := checkBound(path); err != nil {
		// Whatever is at path now is not ours to remove.
		ln.Close()
		if autoDir != "" {
			os.RemoveAll(autoDir)
		}
		return nil, "", "", err
	}
	return ln, path, autoDir, nil
}

// checkBound makes sure the name we just bound is still a socket of ours
// that only we may use: in a shared directory another user may have
// renamed something else over it.
func checkBound(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("socket %s vanished right after it was created: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK || st.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("socket %s was replaced by another file (owner uid %d) right after it was created; "+
			"refusing to serve on it (is its directory writable by other users?)", path, st.Uid)
	}
	if st.Mode&0o077 != 0 {
		return fmt.Errorf("socket %s has mode %04o after it was created, want 0600", path, st.Mode&0o7777)
	}
	return nil
}

// removeStale deletes a socket file at path that no daemon answers on, so a
// user-chosen path can be reused after a crash or a STOP (which leaves a
// user-given socket in place). A live socket or any other file is an error.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket path %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("socket path %s exists and is %s, not a socket", path, wire.FileKind(fi.Mode()))
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		c.Close()
		return fmt.Errorf("socket %s is in use by a running daemon", path)
	}
	// Only "connection refused" says that nobody listens. A socket we may
	// not connect to (another user's, in a directory we may write) or one
	// whose backlog is full has a live daemon behind it, whose socket
	// must not be taken away.
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("socket %s exists and cannot be reused: connecting to it failed (%v), so a daemon may still serve it; choose another path", path, unwrapErrno(err))
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// unwrapErrno reduces a dial error to its errno's text when it has one.
func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// peerAllowed reports whether the connecting process runs as our own user.
// Directory and socket modes already keep others out; this also covers a
// user-given socket in a shared directory, and a root client (which the
// modes do not stop) from driving another user's programs by accident.
func peerAllowed(c *net.UnixConn) (bool, error) {
	uid, err := wire.PeerUID(c)
	if err != nil {
		return false, err
	}
	return uid == uint32(os.Getuid()), nil
}
