//go:build unix

// Package safefile opens files that ptyplex writes at a path the user
// names (the --pty-dump file, the MCP log, a sidecar recording), which
// often lie in shared directories such as /tmp. Another local user may
// have planted something under that name: a symbolic link to a file of
// ours, a hard link to one, a FIFO they read from, or a file of their own
// that they can read. Writing any of those would hand them our output or
// let them choose which of our files we overwrite, so the file is opened
// without following links and refused unless it is a plain regular file
// that belongs to us, and made private if other users may read or write
// it.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// RefusedError says why a path was not opened.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refusing to write to %s: %s", e.Path, e.Reason)
}

// OpenAppend opens path for appending, creating it with mode 0600 when it
// does not exist. An existing file of ours that other users may read or
// write is made private first (Exposed tells a caller who wants to say
// so). /dev/null is opened as it is.
func OpenAppend(path string) (*os.File, error) { return open(path, unix.O_APPEND) }

// Exposed reports, by name, whether path is a regular file that OpenAppend
// or Create would make private (its group and other permission bits are
// cleared on the open descriptor), and its mode now: a caller tells the
// user before it happens. A file the open refuses (another user's, one
// with a second name) is not one: the caller would announce a change
// that never comes, right before the refusal. It proves nothing; the
// open checks again.
func Exposed(path string) (fs.FileMode, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil || st.Mode&0o077 == 0 || check(path, &st) != nil {
		return 0, false
	}
	return fs.FileMode(st.Mode & 0o7777), true
}

// Create opens path for writing from the start, creating it with mode 0600
// or truncating it. The file is checked before it is truncated, so a
// refused path is left as it was. /dev/null is opened as it is.
func Create(path string) (*os.File, error) {
	f, err := open(path, 0)
	if err != nil {
		return nil, err
	}
	if path == os.DevNull {
		// A device cannot be truncated (EINVAL): --record /dev/null
		// failed with "truncate /dev/null: invalid argument".
		return f, nil
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate %s: %w", path, err)
	}
	return f, nil
}

// WriteWhole puts data at path as a whole or not at all: it is written to
// a new private temporary file in path's directory and renamed over path
// only once complete, so a failed write (a full disk) leaves an existing
// file as it was and no fragment behind. What Create refuses is refused
// here too and left as it is; a replaced file keeps its owner permission
// bits, private. The rename never writes into whatever is at path, so
// something planted there between the check and the rename gets none of
// data. /dev/null is written as it is.
func WriteWhole(path string, data []byte) error {
	if path == os.DevNull {
		f, err := open(path, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return errors.Join(err, f.Close())
	}
	mode := os.FileMode(0o600)
	kept := "" // what a failure says of an existing file
	var st unix.Stat_t
	switch err := unix.Lstat(path, &st); {
	case err == nil:
		if err := check(path, &st); err != nil {
			return err
		}
		mode = os.FileMode(st.Mode & 0o700)
		kept = " (the existing file is left as it was)"
	case err != unix.ENOENT:
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	// A short fixed pattern: one built from the name could pass NAME_MAX.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ptyplex-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: cannot create a temporary file beside it: %w%s", path, bare(err), kept)
	}
	fail := func(op string, err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("%s %s: %w%s", op, path, bare(err), kept)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("write", err)
	}
	if mode != 0o600 {
		if err := tmp.Chmod(mode); err != nil {
			return fail("chmod", err)
		}
	}
	// On disk before the rename: a crash must not leave an empty file
	// in place of the old one.
	if err := tmp.Sync(); err != nil {
		return fail("write", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w%s", path, bare(err), kept)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("replace %s: %w%s", path, bare(err), kept)
	}
	return nil
}

// bare is err without the temporary file's name, which means nothing to
// the user: the caller names the path they gave.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func open(path string, extra int) (*os.File, error) {
	if path == os.DevNull {
		// Nothing written there can be read back; scripts name it to
		// throw a dump away.
		return os.OpenFile(path, os.O_WRONLY|extra, 0)
	}
	// A first look by name refuses the obvious cases before open(2) can
	// have an effect of its own (opening a terminal or a tape device
	// does). It proves nothing, since the name can change right after;
	// the check on the open descriptor below is the one that counts.
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err == nil {
		if err := check(path, &st); err != nil {
			return nil, err
		}
	}
	// O_NOFOLLOW: a symbolic link as the last component fails (ELOOP).
	// O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of
	// blocking until someone opens it for reading.
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC | extra
	fd, err := openRetry(path, flags)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := check(path, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// What goes into these files (a session's raw output, every frame of a
	// sidecar, a server's log) can hold whatever was typed, passwords
	// included. A file made with the usual umask (0644, or 0664 under a
	// user-private group's 002) is ours to make private: on the
	// descriptor, so the name cannot be swapped in between.
	if st.Mode&0o077 != 0 {
		if err := unix.Fchmod(fd, uint32(st.Mode&0o700)); err != nil {
			unix.Close(fd)
			return nil, &RefusedError{path, fmt.Sprintf("other users may read or write it (mode %04o) and it could not be made private: %v",
				st.Mode&0o7777, err)}
		}
	}
	// A regular file ignores O_NONBLOCK, but clear it anyway so that the
	// descriptor behaves as an ordinary one.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0o600)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openError explains the errors that mean "something was planted here".
func openError(path string, err error) error {
	switch err {
	case unix.ELOOP:
		return &RefusedError{path, "it is a symbolic link (links are not followed)"}
	case unix.ENXIO:
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil {
			return &RefusedError{path, "it is " + kind(uint32(st.Mode)) + ", not a regular file"}
		}
		return &RefusedError{path, "it is not a regular file"}
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// check refuses anything but a regular file of ours with a single name.
func check(path string, st *unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return &RefusedError{path, "it is " + kind(uint32(st.Mode)) + ", not a regular file"}
	}
	if me := uint32(os.Geteuid()); st.Uid != me {
		return &RefusedError{path, fmt.Sprintf("it belongs to %s, not to us (%s)", who(st.Uid), who(me))}
	}
	if n := uint64(st.Nlink); n > 1 {
		return &RefusedError{path, fmt.Sprintf("it has %d hard links, so writing it would change another file too", n)}
	}
	return nil
}

func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO (named pipe)"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFDIR:
		return "a directory"
	}
	return "not a regular file"
}

// who names a uid for an error message: "user alice (uid 1000)".
func who(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return "user " + u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
