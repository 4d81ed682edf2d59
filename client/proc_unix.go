//go:build unix

package client

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

const exeSuffix = ""

func executable(fi fs.FileInfo) bool { return fi.Mode()&0o111 != 0 }

func noWindow(*exec.Cmd) {}

// terminate asks a process to end (SIGTERM), and lets a stopped one go
// on to do so (SIGCONT); nil does nothing.
func terminate(p *os.Process) {
	if p != nil {
		p.Signal(syscall.SIGTERM)
		p.Signal(syscall.SIGCONT)
	}
}

// signalGroup signals the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) { syscall.Kill(-pid, sig) }

// ownGroup starts cmd in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
