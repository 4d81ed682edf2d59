//go:build unix && !linux

package persist

import (
	"errors"
	"os"
	"syscall"
)

// stateFile is where the handover state goes: a temporary file, unlinked
// at once so that nothing is left behind (there is no memfd here).
func stateFile() (*os.File, error) {
	f, err := os.CreateTemp("", "ptyplex-persist-state-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// selfExe is nil: without /proc/self/exe (and execveat) there is no
// handle on our own binary to go back to.
func selfExe() *os.File { return nil }

// ExecPrevious is not available here: a new image that cannot take the
// state over ends, and the terminals get the PTY hangup.
func ExecPrevious(exeFD int, args []string) error {
	return errors.New("going back to the previous binary is only supported on Linux")
}

// execCandidate executes the file at path: without /proc/self/fd (and
// execveat) here, the file verified is not pinned, and a file put at its
// path between the check and execve would run. (docs/security.md says
// so.) It returns only on failure.
func execCandidate(c *candidate, args []string) error {
	return syscall.Exec(c.Name(), args, os.Environ())
}

// runnable is the candidate's path (tryFlags): there is no descriptor to
// run it through here (see execCandidate).
func (c *candidate) runnable() (path string, done func(), err error) {
	return c.Name(), func() {}, nil
}
