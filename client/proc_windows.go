package client

import (
	"io/fs"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

const exeSuffix = ".exe"

// executable: Windows has no execute bit; the name says it.
func executable(fs.FileInfo) bool { return true }

// noWindow starts the sidecar (or transport) without a console window
// of its own, for hosts that are GUI programs (what node's windowsHide
// does); its stdio are our pipes either way.
func noWindow(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true, CreationFlags: windows.CREATE_NO_WINDOW}
}
