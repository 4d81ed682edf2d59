package client

import (
	"errors"
	"fmt"
)

var (
	// ErrClientClosed is returned by Open after Close began, and wrapped
	// by the error of a terminal still live when the connection ended
	// after Close (or Stop): one whose EXIT never came, such as a
	// persistent server's, which goes on without this connection.
	ErrClientClosed = errors.New("client closed")
	// ErrSidecarGone is wrapped by every error caused by the sidecar
	// going away or its stream turning corrupt.
	ErrSidecarGone = errors.New("sidecar gone")
	// ErrTerminalClosed is returned by Write after Close.
	ErrTerminalClosed = errors.New("terminal closed")
	// ErrExitUnknown is returned by Wait when the sidecar could not
	// collect the child's status (EXIT with a null exitCode).
	ErrExitUnknown = errors.New("exit status unknown")
	// ErrProtocol is wrapped by the error that ends a connection whose
	// sidecar broke the protocol: OUTPUT beyond the credit granted, frames
	// about terminals that are not open, a second EXIT. The connection
	// ends with it (wrapped in ErrSidecarGone too).
	ErrProtocol = errors.New("sidecar broke the protocol")
)

// OpenError is an OPEN the sidecar refused with an ERROR frame.
type OpenError struct {
	TerminalID string
	Message    string // the sidecar's reason, e.g. "terminal id already exists"
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("open terminal %q: %s", e.TerminalID, e.Message)
}

// InputError reports INPUT that a sidecar dropped, said with an ERROR frame
// about a live terminal. The next Write returns it. ptyplex-sidecar never
// drops input (it holds back frames instead, see PROTOCOL.md), but earlier
// versions did, and other sidecars may.
type InputError struct {
	TerminalID string
	Message    string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("terminal %q: input dropped: %s", e.TerminalID, e.Message)
}
