package testproc

import (
	"os/exec"
	"syscall"
)

// TieToParent makes cmd's process a group of its own that the kernel
// kills (SIGKILL) when the test binary dies, however it dies: for busy
// loops and other direct children that must never outlive a killed run.
// It has to be called before cmd.Start.
func TieToParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
