//go:build unix

package wire

// ErrorCode names a kind of error answer that clients act on. The daemon
// sends it in the answer's "code" field, beside the "error" text, which
// stays the words interminai's clients read; a client recognises the kind
// with errors.Is(err, wire.ErrX), never by the text. Daemons that predate
// a code (and interminai's) send none, and match no sentinel.
type ErrorCode string

func (c ErrorCode) Error() string { return "daemon error " + string(c) }

// The codes, each its own sentinel.
const (
	// ErrNoShellIntegration: RUN cannot tell where a command ends because
	// the session's program sends no shell-integration marks (OSC 133).
	ErrNoShellIntegration ErrorCode = "no_shell_integration"
)

// CodedError is a RequestError that carries a code: the daemon answers
// Text as the "error", unchanged, and Code as the "code".
type CodedError struct {
	Code ErrorCode
	Text string
}

func (e CodedError) Error() string { return e.Text }

// Is matches the sentinel of the error's code.
func (e CodedError) Is(target error) bool {
	c, ok := target.(ErrorCode)
	return ok && c == e.Code
}

// DaemonError is an error answer from the daemon: its text, and its code
// when it sent one.
type DaemonError struct {
	Text string
	Code ErrorCode
}

func (e DaemonError) Error() string { return e.Text }

// Is matches the sentinel of the answer's code, so that
// errors.Is(err, wire.ErrNoShellIntegration) holds for that answer.
func (e DaemonError) Is(target error) bool {
	c, ok := target.(ErrorCode)
	return ok && e.Code != "" && c == e.Code
}

// Err is the DaemonError of an error answer.
func (r *Response) Err() DaemonError {
	return DaemonError{Text: r.Error, Code: ErrorCode(r.Code)}
}
