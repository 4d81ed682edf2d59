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
// another client's endless WAIT), SIGTERM its pid, then SIGKILL. pid 0
// (a session started elsewhere) skips the signals.
func stopSession(ctx context.Context, socket string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, stopAnswerTimeout)
	defer cancel()
	_, err := call[wire.MessageData](ctx, socket, map[string]any{"type": "STOP"})
	if err == nil {
		return nil
	}
	if pid <= 0 {
		return err
	}
	if !alive(pid) {
		return nil // the daemon is already gone: nothing left to stop
	}
	syscall.Kill(pid, syscall.SIGTERM) // the daemon shuts the session down on SIGTERM
	if waitGone(pid, daemonExitTimeout) {
		return nil
	}
	syscall.Kill(pid, syscall.SIGKILL) // closing the PTY hangs the child up
	if waitGone(pid, daemonExitTimeout) {
		return nil
	}
	return fmt.Errorf("session %s: daemon pid %d did not exit: %w", socket, pid, err)
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

// alive reports whether pid is running. A zombie counts as gone: the
// daemon's parent (`ptyplex start`) has exited, and in a container nobody
// may reap it.
func alive(pid int) bool { return !waitGone(pid, 0) }

// waitGone waits until pid exits or d passes, and reports whether it
// exited. The daemon is not our child (start detached it), so wait(2)
// cannot be used; procwait works for any process.
func waitGone(pid int, d time.Duration) bool { return procwait.Gone(pid, d) }

// stop ends a session this server started. A daemon that died without
// STOP (killed) leaves its private socket directory behind; remove it.
func (e *entry) stop(ctx context.Context) error {
	if err := stopSession(ctx, e.Socket, e.PID); err != nil {
		return err
	}
	if e.AutoSocket && !alive(e.PID) {
		dir := filepath.Dir(e.Socket)
		if strings.HasPrefix(filepath.Base(dir), "interminai-") {
			os.Remove(e.Socket)
			os.Remove(dir) // only if empty: never more than the daemon made
		}
	}
	return nil
}
