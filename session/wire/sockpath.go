//go:build unix

package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxSocketPath is the longest Unix socket path this system takes: the
// kernel's sun_path field (108 bytes on Linux, 104 on macOS and the BSDs)
// less the NUL that ends the path.
var MaxSocketPath = len(unix.RawSockaddrUnix{}.Path) - 1

// CheckSocketPath names the limit instead of leaving the kernel's bare
// "invalid argument" to explain a path that is too long.
func CheckSocketPath(path string) error {
	if len(path) > MaxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes long, over the limit of %d bytes for a Unix socket path on this system (sun_path); choose a shorter path", path, len(path), MaxSocketPath)
	}
	return nil
}

// dialError explains a failed connect to socket. A path that exists but
// is not a socket (a directory, a regular file) gets "connection refused"
// from the kernel, which reads as a stopped daemon; say what it is instead.
func dialError(socket string, err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		if fi, serr := os.Stat(socket); serr == nil && fi.Mode().Type() != fs.ModeSocket {
			return fmt.Errorf("cannot connect to %s: it is %s, not a socket (give the path that 'ptyplex start' printed after Socket:)", socket, FileKind(fi.Mode()))
		}
	}
	return fmt.Errorf("connect to %s: %w", socket, unwrapSyscall(err))
}

// FileKind names a file type in words: "a directory", "a regular file".
func FileKind(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "a regular file"
	case fs.ModeDir:
		return "a directory"
	case fs.ModeNamedPipe:
		return "a named pipe (FIFO)"
	case fs.ModeSymlink:
		return "a symbolic link"
	case fs.ModeDevice:
		return "a block device"
	case fs.ModeDevice | fs.ModeCharDevice:
		return "a character device"
	case fs.ModeSocket:
		return "a socket"
	}
	return "a " + m.Type().String() + " file"
}
