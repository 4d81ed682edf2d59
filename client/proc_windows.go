package client

import (
	"io/fs"
	"os"
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

// terminate does nothing here: Windows has no signal a process can catch
// to end in order; Close's bound kills the sidecar instead.
func terminate(*os.Process) {}

// signalGroup does nothing here: a Windows sidecar's children are in a
// job object of its own, which only it ends.
func signalGroup(int, syscall.Signal) {}

// ownGroup does nothing here: console control events reach only the
// sidecar's own console, which CREATE_NO_WINDOW gives it (noWindow).
func ownGroup(*exec.Cmd) {}
