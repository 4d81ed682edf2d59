package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// autoDirPrefix names the private directory of an auto-generated socket;
// existing tooling looks for the interminai name.
const autoDirPrefix = "interminai-"

// listen opens the session socket: in a fresh 0700 directory when path is
// "", else at path (replacing a stale socket nobody listens on). The socket
// itself is 0600. It returns the listener, the socket path and, for an
// auto-generated socket, the directory to remove on STOP.
func listen(path string) (ln *net.UnixListener, sock, autoDir string, err error) {
	if path == "" {
		// Not os.TempDir: tooling expects /tmp/interminai-* whatever TMPDIR says.
		autoDir, err = os.MkdirTemp("/tmp", autoDirPrefix)
		if err != nil {
			return nil, "", "", fmt.Errorf("create socket directory: %w", err)
		}
		if err := os.Chmod(autoDir, 0o700); err != nil {
			os.Remove(autoDir)
			return nil, "", "", fmt.Errorf("create socket directory: %w", err)
		}
		path = filepath.Join(autoDir, "socket")
	} else {
		if path, err = filepath.Abs(path); err != nil {
			return nil, "", "", fmt.Errorf("socket path: %w", err)
		}
		if err := removeStale(path); err != nil {
			return nil, "", "", err
		}
	}
	// The umask decides the socket's mode at bind time, so there is no
	// window in which another user could connect; chmod below is a second
	// line for umasks that are stricter than we need.
	old := syscall.Umask(0o077)
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
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		if autoDir != "" {
			os.RemoveAll(autoDir)
		}
		return nil, "", "", fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return ln, path, autoDir, nil
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
		return fmt.Errorf("socket path %s exists and is not a socket", path)
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		c.Close()
		return fmt.Errorf("socket %s is in use by a running daemon", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// peerAllowed reports whether the connecting process runs as our own user.
// Directory and socket modes already keep others out; this also covers a
// user-given socket in a shared directory, and a root client (which the
// modes do not stop) from driving another user's programs by accident.
func peerAllowed(c *net.UnixConn) (bool, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return false, err
	}
	var uid uint32
	var cerr error
	if err := rc.Control(func(fd uintptr) { uid, cerr = peerUID(int(fd)) }); err != nil {
		return false, err
	}
	if cerr != nil {
		return false, cerr
	}
	return uid == uint32(os.Getuid()), nil
}
