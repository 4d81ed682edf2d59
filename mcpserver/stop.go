//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
	"github.com/ptyplex/ptyplex/session/wire"
)

// Grace periods of stopSession. STOP itself gives the child up to a few
// seconds to react to SIGHUP/SIGTERM before the daemon kills it.
const (
	stopAnswerTimeout = 10 * time.Second // for the daemon to answer STOP
	daemonExitTimeout = 5 * time.Second  // for the daemon to exit after a signal
)

// stopSession ends a session: STOP through the socket, the way
// `ptyplex stop` does; if the daemon does not answer (stuck, or serving
// another client's endless WAIT), SIGTERM it, then SIGKILL, through d,
// the hold the server took on it at start. Without a hold (a session
// started elsewhere, or one the server could not hold) nothing is
// signalled: a pid alone may name someone else's process by now.
func stopSession(ctx context.Context, socket string, d *daemon) error {
	ctx, cancel := context.WithTimeout(ctx, stopAnswerTimeout)
	defer cancel()
	_, err := call[wire.MessageData](ctx, socket, map[string]any{"type": "STOP"})
	if err == nil {
		return nil
	}
	if d == nil {
		return err
	}
	if d.exited() {
		return nil // the daemon is already gone (its idle exit, say): nothing left to stop
	}
	// The daemon shuts the session down on SIGTERM.
	if serr := d.signal(syscall.SIGTERM); serr == errDaemonGone {
		return nil
	}
	if d.waitExit(daemonExitTimeout) {
		return nil
	}
	// Closing the PTY hangs the child up.
	if serr := d.signal(syscall.SIGKILL); serr == errDaemonGone {
		return nil
	}
	if d.waitExit(daemonExitTimeout) {
		return nil
	}
	return fmt.Errorf("session %s: daemon pid %d did not exit: %w", socket, d.pid, err)
}

// stopAll stops the given sessions in parallel and returns the first error.
func stopAll(ctx context.Context, entries []*entry) error {
	var wg sync.WaitGroup
	errs := make([]error, len(entries))
	for i, e := range entries {
		wg.Go(func() { errs[i] = e.stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stop ends a session this server started, and gives up the hold on its
// daemon once it is gone. A daemon that died without STOP (killed)
// leaves its private socket directory behind; remove it.
func (e *entry) stop(ctx context.Context) error {
	if err := stopSession(ctx, e.Socket, e.daemon); err != nil {
		return err
	}
	// Removing an empty directory harms nobody, so without a hold the
	// pid is good enough to decide.
	gone := (e.daemon != nil && e.daemon.exited()) || (e.daemon == nil && !procwait.Alive(e.PID))
	if e.AutoSocket && gone {
		dir := filepath.Dir(e.Socket)
		if strings.HasPrefix(filepath.Base(dir), "interminai-") {
			os.Remove(e.Socket)
			os.Remove(dir) // only if empty: never more than the daemon made
		}
	}
	e.daemon.release()
	return nil
}
