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
	if err := lockwait.Free(ctx, lock); err != nil {
		if errors.Is(err, lockwait.ErrHeld) {
			return fmt.Errorf("the server closed its connections, but its process still runs (it holds %s): %w", lock, ctx.Err())
		}
		return fmt.Errorf("the server's %w", err)
	}
	return nil
}
