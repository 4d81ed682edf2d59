//go:build !linux && !windows

package testproc

import (
	"os/exec"
	"syscall"
)

// TieToParent makes cmd's process a group of its own; without a
// parent-death signal here, the test's cleanup (and the sweeper where
// there is one) ends it.
func TieToParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
