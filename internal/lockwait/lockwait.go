//go:build unix

// Package lockwait waits for a lock file's flock to be free: a persistent
// server holds its lock for as long as its process lives, so a free lock
// is how `--stop` and the Go client's Stop know the process is gone.
package lockwait

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// every is how often Free tries the lock. The flock that the holder
// drops as it exits wakes nobody, so the wait polls.
const every = 5 * time.Millisecond

// ErrHeld wraps ctx's error when ctx ended with the lock still held.
var ErrHeld = errors.New("the lock is still held")

// Free waits until nobody holds an flock on the file at path, or ctx
// ends. A missing file is free: nobody ever held it. The file is opened
// read-only without following a symbolic link, and not created.
func Free(ctx context.Context, path string) error { return FreeOr(ctx, path, nil) }

// FreeOr is Free that also returns nil, with the lock still held, once
// over (if not nil) reports true: the caller's own sign that the holder
// it waits for is gone and another one took the lock since.
func FreeOr(ctx context.Context, path string, over func() bool) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer unix.Close(fd)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			unix.Flock(fd, unix.LOCK_UN)
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		if over != nil && over() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%s): %w", ErrHeld, path, ctx.Err())
		case <-tick.C:
		}
	}
}

// Mark identifies the file at a path as it is when taken: its device and
// inode, and its change time, as a file system may give a new file the
// inode number of one just removed. A persistent server binds its socket
// anew as it starts, once it holds its lock, so a socket other than the
// one marked says that the process that held the lock then has ended
// and another holds it now.
type Mark struct {
	dev, ino   uint64
	csec, nsec int64
	ok         bool
}

// MarkOf marks the file at path; a mark of nothing if there is none.
func MarkOf(path string) Mark {
	var st unix.Stat_t
	if path == "" || unix.Lstat(path, &st) != nil {
		return Mark{}
	}
	return Mark{dev: uint64(st.Dev), ino: uint64(st.Ino), csec: int64(st.Ctim.Sec), nsec: int64(st.Ctim.Nsec), ok: true}
}

// Valid reports whether m marks a file.
func (m Mark) Valid() bool { return m.ok }

// Replaced reports whether path now names a file other than the one m
// marked (false if either is missing).
func (m Mark) Replaced(path string) bool {
	now := MarkOf(path)
	return m.ok && now.ok && now != m
}
