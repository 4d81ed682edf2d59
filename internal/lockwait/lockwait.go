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
func Free(ctx context.Context, path string) error {
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
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%s): %w", ErrHeld, path, ctx.Err())
		case <-tick.C:
		}
	}
}
