package testproc

import (
	"os/exec"
	"path/filepath"
)

// Admin prepares the system tool prog (useradd, userdel), found in PATH or
// else in the system directories: root's PATH in a non-login shell, and
// many containers', has no /usr/sbin, where the tests that act as a second
// user find them all the same.
func Admin(prog string, args ...string) *exec.Cmd {
	if _, err := exec.LookPath(prog); err != nil {
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			// With a slash, LookPath only checks the file is executable.
			if p, err := exec.LookPath(filepath.Join(dir, prog)); err == nil {
				prog = p
				break
			}
		}
	}
	return exec.Command(prog, args...)
}
