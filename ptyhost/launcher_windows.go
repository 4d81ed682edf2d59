package ptyhost

import (
	"os"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Wine (8.0) does not bind a pseudo-console's child's standard handles
// to the console: started with STARTF_USESTDHANDLES and no handles, as
// real Windows needs, the child's output goes nowhere; started without,
// the child writes to our own stdout. Under Wine each child is therefore
// started by a launcher: this same executable, on the pseudo-console,
// which opens CONIN$ and CONOUT$ (the console it is attached to), starts
// the program with them as its standard handles, waits for it and exits
// with its exit code. The launcher is in the job too, so the job's rules
// are unchanged. Real Windows never takes this path.

const (
	launchEnv     = "PTYPLEX_CONPTY_LAUNCH"
	launchAppEnv  = "PTYPLEX_CONPTY_APP"
	launchLineEnv = "PTYPLEX_CONPTY_CMDLINE"
	// launcherMode overrides the detection: "always" or "never" (for
	// comparing the two paths; "never" loses the output under Wine).
	launcherMode = "PTYPLEX_CONPTY_LAUNCHER"
)

// IsWine reports whether we run under Wine: its ntdll exports
// wine_get_version, which Windows' does not.
func IsWine() bool {
	wineOnce.Do(func() {
		wine = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
	})
	return wine
}

var (
	wineOnce sync.Once
	wine     bool
)

func useLauncher() bool {
	switch os.Getenv(launcherMode) {
	case "always":
		return true
	case "never":
		return false
	}
	return IsWine()
}

// The launcher runs before anything else of the program it is a copy of.
func init() {
	if os.Getenv(launchEnv) == "1" {
		windows.ExitProcess(launch())
	}
}

// launch starts the program named in the environment on our console's
// handles and returns its exit code.
func launch() uint32 {
	app, line := os.Getenv(launchAppEnv), os.Getenv(launchLineEnv)
	sa := inheritable()
	conin, err := openConsole("CONIN$", sa)
	if err != nil {
		return fail("open CONIN$: " + err.Error())
	}
	conout, err := openConsole("CONOUT$", sa)
	if err != nil {
		return fail("open CONOUT$: " + err.Error())
	}
	windows.SetStdHandle(windows.STD_INPUT_HANDLE, conin)
	windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, conout)
	windows.SetStdHandle(windows.STD_ERROR_HANDLE, conout)
	si := &windows.StartupInfo{Flags: windows.STARTF_USESTDHANDLES, StdInput: conin, StdOutput: conout, StdErr: conout}
	si.Cb = uint32(unsafe.Sizeof(*si))
	appW, err := windows.UTF16PtrFromString(app)
	if err != nil {
		return fail(err.Error())
	}
	lineW, err := windows.UTF16PtrFromString(line)
	if err != nil {
		return fail(err.Error())
	}
	block, err := envBlock(envOf())
	if err != nil {
		return fail(err.Error())
	}
	pi := &windows.ProcessInformation{}
	if err := windows.CreateProcess(appW, lineW, nil, nil, true, windows.CREATE_UNICODE_ENVIRONMENT, &block[0], nil, si, pi); err != nil {
		return fail("cannot start " + app + ": " + err.Error())
	}
	windows.CloseHandle(pi.Thread)
	windows.WaitForSingleObject(pi.Process, windows.INFINITE)
	var code uint32
	if err := windows.GetExitCodeProcess(pi.Process, &code); err != nil {
		return fail("GetExitCodeProcess: " + err.Error())
	}
	return code
}

// envOf is our environment without the launcher's own variables.
func envOf() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _ := envName(kv)
		switch strings.ToUpper(name) {
		case launchEnv, launchAppEnv, launchLineEnv:
			continue
		}
		env = append(env, kv)
	}
	return env
}

func inheritable() *windows.SecurityAttributes {
	sa := &windows.SecurityAttributes{InheritHandle: 1}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	return sa
}

func openConsole(name string, sa *windows.SecurityAttributes) (windows.Handle, error) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	return windows.CreateFile(n, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, sa, windows.OPEN_EXISTING, 0, 0)
}

// fail reports on the console, where the terminal's reader sees it, and
// returns the exit code of a launcher that could not start its program.
func fail(msg string) uint32 {
	if h, err := openConsole("CONOUT$", nil); err == nil {
		b := []byte("ptyplex launcher: " + msg + "\r\n")
		var n uint32
		windows.WriteFile(h, b, &n, nil)
	}
	return launchFailed
}

// launchFailed is the exit code of a launcher that could not start its
// program: what cmd.exe gives for a command it cannot run.
const launchFailed = 9009
