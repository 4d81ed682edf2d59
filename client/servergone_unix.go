//go:build unix

package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptyplex/ptyplex/internal/lockwait"
	"github.com/ptyplex/ptyplex/session/wire"
)

// A persistent server holds its lock file until its process ends, a
// moment after it closed its connections at a STOP. Stop waits for the
// lock to be free, as `ptyplex-sidecar --stop` does: a server started
// in between would find it taken and leave the work to the one going.
// One started once the lock was free (by another client's reconnect)
// holds it again, and binds a new socket: that too says the one stopped
// is gone.

// serverPaths returns the lock file and socket of the persistent server
// name as a process with environment env finds them: sidecar/NAME.lock
// and sidecar/NAME.sock in the session registry's directory for that
// environment (wire.RegistryCandidates, the first that has a lock file).
// "" when it cannot be told or has no lock file (no server ever ran).
func serverPaths(env []string, name string) (lock, sock string) {
	if env == nil {
		env = os.Environ()
	}
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
		return "", ""
	}
	for _, d := range dirs {
		lock := filepath.Join(d, "sidecar", name+".lock")
		if _, err := os.Lstat(lock); err == nil {
			return lock, filepath.Join(d, "sidecar", name+".sock")
		}
	}
	return "", ""
}

// serverMark tells the server listening now apart from one started after
// it, by its socket (lockwait.Mark).
type serverMark = lockwait.Mark

// markServer returns the mark of the server name that listens now.
func markServer(env []string, name string) serverMark {
	_, sock := serverPaths(env, name)
	return lockwait.MarkOf(sock)
}

// waitServerGone waits until the process of the persistent server name
// that listened when was taken has ended, or ctx ends: until its lock is
// free (or there is none), or another server of that name listens, on a
// socket other than was's (a reconnecting client may start one as soon
// as the lock is free; then the lock is never seen free again).
func waitServerGone(ctx context.Context, env []string, name string, was serverMark) error {
	lock, sock := serverPaths(env, name)
	if lock == "" {
		return nil
	}
	if err := lockwait.FreeOr(ctx, lock, func() bool { return was.Replaced(sock) }); err != nil {
		if errors.Is(err, lockwait.ErrHeld) {
			return fmt.Errorf("the server closed its connections, but its process still runs (it holds %s): %w", lock, ctx.Err())
		}
		return fmt.Errorf("the server's %w", err)
	}
	return nil
}
