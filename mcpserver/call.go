//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/ptyplex/ptyplex/session/wire"
)

// call sends one request to the daemon behind socket, with its fields at
// the top level and nested under "data", and returns the answer's data,
// giving up when ctx ends (a daemon handles one request at a time, and
// another client's WAIT can hold it).
func call[T any](ctx context.Context, socket string, req any) (T, error) {
	var data T
	if m, ok := req.(map[string]any); ok {
		req = wire.BothForms(m) // daemons read fields at either place
	}
	if err := wire.CallDataContext(ctx, socket, req, &data); err != nil {
		return data, describe(socket, err)
	}
	return data, nil
}

// describe turns a failure to talk to a daemon into a message an agent can
// act on.
func describe(socket string, err error) error {
	var de wire.DaemonError
	if errors.As(err, &de) {
		return fmt.Errorf("session %s: %w", socket, de) // errors.Is sees its code
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
	if errors.Is(err, wire.ErrNoAnswer) {
		return fmt.Errorf("session %s: the daemon closed the connection without answering (it is probably shutting down)", socket)
	}
	return fmt.Errorf("session %s: %w", socket, err)
}
