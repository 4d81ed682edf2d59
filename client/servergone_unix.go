//go:build unix

package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// A persistent server holds its lock file until its process ends, a
// moment after it closed its connections at a STOP. Stop waits for the
// lock to be free, as `ptyplex-sidecar --stop` does: a server started
// in between would find it taken and leave the work to the one going.

// serverLock returns the lock file of the persistent server name as a
// process with environment env finds it: sidecar/NAME.lock in the session
// registry's directory for that environment (wire.RegistryCandidates, the
// first that has one). "" when it cannot be told or has no lock file (no
// server ever ran).
func serverLock(env []string, name string) string {
	get := func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
	dirs, _, err := wire.RegistryCandidates(get)
	if err != nil {
		return ""
	}
	for _, d := range dirs {
		lock := filepath.Join(d, "sidecar", name+".lock")
		if _, err := os.Lstat(lock); err == nil {
			return lock
		}
	}
	return ""
}

// serverGoneWait is how often waitServerGone tries the lock.
const serverGoneWait = 5 * time.Millisecond

// waitServerGone waits until the lock of the persistent server name is
// free (or there is none), or ctx ends.
func waitServerGone(ctx context.Context, env []string, name string) error {
	if env == nil {
		env = os.Environ()
	}
	lock := serverLock(env, name)
	if lock == "" {
		return nil
	}
	fd, err := unix.Open(lock, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the server's lock: %w", err)
	}
	defer unix.Close(fd)
	tick := time.NewTicker(serverGoneWait)
	defer tick.Stop()
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			unix.Flock(fd, unix.LOCK_UN)
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("the server's lock %s: %w", lock, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the server closed its connections, but its process still runs (it holds %s): %w", lock, ctx.Err())
		case <-tick.C:
		}
	}
}
