package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/ptyplex/ptyplex/session"
)

// call sends one request to the daemon behind socket and returns the
// answer's data. session.CallData has no deadline, and a daemon handles one
// request at a time (another client's WAIT can hold it), so the request runs
// in a goroutine of its own and call returns when ctx ends. That goroutine
// ends when the daemon answers or its socket closes; every WAIT we send
// carries timeout_ms, so the daemon answers ours in bounded time.
func call[T any](ctx context.Context, socket string, req any) (T, error) {
	type answer struct {
		data T
		err  error
	}
	done := make(chan answer, 1) // buffered: an abandoned call must not block
	go func() {
		var a answer
		a.err = session.CallData(socket, req, &a.data)
		done <- a
	}()
	select {
	case a := <-done:
		if a.err != nil {
			return a.data, describe(socket, a.err)
		}
		return a.data, nil
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("session %s: request abandoned: %w", socket, context.Cause(ctx))
	}
}

// describe turns a failure to talk to a daemon into a message an agent can
// act on.
func describe(socket string, err error) error {
	var de session.DaemonError
	if errors.As(err, &de) {
		return fmt.Errorf("session %s: %s", socket, string(de))
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT:
			return fmt.Errorf("session %s: No such file or directory: the session is not running (was it stopped?); start a new one with the start tool", socket)
		case syscall.ECONNREFUSED:
			return fmt.Errorf("session %s: connection refused: the daemon behind this socket has stopped", socket)
		}
	}
	msg := err.Error()
	if strings.Contains(msg, "closed the connection") {
		return fmt.Errorf("session %s: the daemon closed the connection without answering (it is probably shutting down)", socket)
	}
	return fmt.Errorf("session %s: %w", socket, err)
}
