package ptyhost

import (
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
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
//
// Ctrl-C under Wine: Wine 8's conhost, run for a pseudo-console, does
// not turn a 0x03 read from its input pipe into CTRL_C_EVENT as Windows'
// does: it stops reading input, and the console and every process on it
// end at once with exit code 0 (the terminal ended with a false
// "exitCode 0" and the program never saw its ^C). So on the launcher
// path the backend never writes 0x03 into the input pipe: for each ^C
// (a 0x03 in the input, or SIGINT) it releases a semaphore the launcher
// waits on, and the launcher, which is attached to the console, does
// what Windows' conhost does with a typed ^C: if the console's input is
// processed (ENABLE_PROCESSED_INPUT, the default) it raises
// CTRL_C_EVENT for the processes on the console
// (GenerateConsoleCtrlEvent), otherwise it puts a Ctrl-C key (the
// character 0x03) into the console's input for the program to read.
//
// The launcher gets that CTRL_C_EVENT too and must survive it and pass
// it on untouched: it handles every console control event itself,
// doing nothing for Ctrl-C and Ctrl-Break and, for the close events,
// waiting for its program and exiting with its code; and it starts its
// program with Ctrl-C processing on (not ignored: a process that
// ignores Ctrl-C passes that on to the processes it starts), so the
// program gets Windows' default handling or its own.

const (
	launchEnv     = "PTYPLEX_CONPTY_LAUNCH"
	launchAppEnv  = "PTYPLEX_CONPTY_APP"
	launchLineEnv = "PTYPLEX_CONPTY_CMDLINE"
	// launchCtrlCEnv names the semaphore released once per ^C.
	launchCtrlCEnv = "PTYPLEX_CONPTY_CTRLC"
	// launchStartedEnv names the event the launcher sets once its
	// program runs; a launcher that ends without setting it could not
	// start the program, and its exit code says why (launchError).
	launchStartedEnv = "PTYPLEX_CONPTY_STARTED"
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
	// Ctrl-C processed, not ignored, in what the program inherits; our
	// own handler, called first, keeps the launcher alive.
	if err := setConsoleCtrlHandler(0, false); err != nil {
		return fail("SetConsoleCtrlHandler: " + err.Error())
	}
	if err := setConsoleCtrlHandler(windows.NewCallback(launcherCtrl), true); err != nil {
		return fail("SetConsoleCtrlHandler: " + err.Error())
	}
	pi := &windows.ProcessInformation{}
	if err := windows.CreateProcess(appW, lineW, nil, nil, true, windows.CREATE_UNICODE_ENVIRONMENT, &block[0], nil, si, pi); err != nil {
		code := fail("cannot start " + app + ": " + err.Error())
		if errno, ok := err.(syscall.Errno); ok && errno != 0 {
			code = uint32(errno) // for the backend's error (launchError)
		}
		return code
	}
	windows.CloseHandle(pi.Thread)
	child.Store(uintptr(pi.Process))
	if name := os.Getenv(launchStartedEnv); name != "" {
		setStarted(name)
	}
	if name := os.Getenv(launchCtrlCEnv); name != "" {
		if sem, err := openSemaphore(name); err == nil {
			go typeCtrlC(sem, conin)
		} else {
			fail("open the Ctrl-C semaphore: " + err.Error())
		}
	}
	return waitChild(pi.Process)
}

// typeCtrlC does for each release of sem what Windows' conhost does
// with a ^C typed into a console whose input handle is conin.
func typeCtrlC(sem, conin windows.Handle) {
	for {
		if ev, err := windows.WaitForSingleObject(sem, windows.INFINITE); err != nil || ev != windows.WAIT_OBJECT_0 {
			return
		}
		var mode uint32
		if err := windows.GetConsoleMode(conin, &mode); err == nil && mode&windows.ENABLE_PROCESSED_INPUT == 0 {
			writeCtrlCKey(conin)
			continue
		}
		windows.GenerateConsoleCtrlEvent(windows.CTRL_C_EVENT, 0)
	}
}

// keyEventRecord is INPUT_RECORD holding a KEY_EVENT_RECORD.
type keyEventRecord struct {
	EventType       uint16
	_               uint16
	KeyDown         int32
	RepeatCount     uint16
	VirtualKeyCode  uint16
	VirtualScanCode uint16
	Char            uint16
	ControlKeyState uint32
}

var (
	kernel32               = windows.NewLazySystemDLL("kernel32.dll")
	procWriteConsoleInputW = kernel32.NewProc("WriteConsoleInputW")
	procCreateSemaphoreW   = kernel32.NewProc("CreateSemaphoreW")
	procOpenSemaphoreW     = kernel32.NewProc("OpenSemaphoreW")
	procReleaseSemaphore   = kernel32.NewProc("ReleaseSemaphore")
)

// writeCtrlCKey puts the key presses of Ctrl-C into the console's input.
func writeCtrlCKey(conin windows.Handle) {
	const leftCtrlPressed = 0x0008
	recs := [2]keyEventRecord{
		{EventType: windows.KEY_EVENT, KeyDown: 1, RepeatCount: 1, VirtualKeyCode: 'C', VirtualScanCode: 0x2e, Char: 3, ControlKeyState: leftCtrlPressed},
		{EventType: windows.KEY_EVENT, KeyDown: 0, RepeatCount: 1, VirtualKeyCode: 'C', VirtualScanCode: 0x2e, Char: 3, ControlKeyState: leftCtrlPressed},
	}
	var n uint32
	procWriteConsoleInputW.Call(uintptr(conin), uintptr(unsafe.Pointer(&recs[0])), uintptr(len(recs)), uintptr(unsafe.Pointer(&n)))
}

// newStartedEvent makes the event the launcher sets once its program
// runs, under a unique name for the launcher to open.
func newStartedEvent() (windows.Handle, string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return 0, "", err
	}
	name := fmt.Sprintf("ptyplex-started-%d-%x", os.Getpid(), rnd)
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, "", err
	}
	h, err := windows.CreateEvent(nil, 1, 0, n)
	if err != nil {
		if h != 0 {
			windows.CloseHandle(h)
		}
		return 0, "", fmt.Errorf("CreateEvent: %w", err)
	}
	return h, name, nil
}

// setStarted sets the launcher's started event.
func setStarted(name string) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return
	}
	if h, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, n); err == nil {
		windows.SetEvent(h)
		windows.CloseHandle(h)
	}
}

// awaitLauncher waits until the launcher proc has started its program
// (it set started) or ended without (the error says why), so that a
// program that cannot be run fails the Start, as CreateProcess does on
// the real-Windows path, instead of giving a terminal that ends at once
// with launchFailed. A launcher that takes longer than launchWait is let
// run: its program is then taken to be running.
func awaitLauncher(started, proc windows.Handle, app string) error {
	ev, err := windows.WaitForMultipleObjects([]windows.Handle{started, proc}, false, uint32(launchWait/time.Millisecond))
	if err != nil || ev != windows.WAIT_OBJECT_0+1 {
		return nil // started (index 0 wins when both are signalled), or slow
	}
	var code uint32
	if err := windows.GetExitCodeProcess(proc, &code); err != nil {
		return fmt.Errorf("launcher: GetExitCodeProcess: %w", err)
	}
	return launchError(app, code)
}

// launchWait bounds how long Start waits for the launcher to start its
// program: well within the 10 s a host gives an OPEN to be answered
// (the seed protocol's open timeout), as OPENED waits for it.
const launchWait = 3 * time.Second

// launchError is the error of a launcher that ended with code without
// starting app: code is CreateProcess's error, or launchFailed for a
// failure before it (the launcher said which on the console).
func launchError(app string, code uint32) error {
	if code == launchFailed {
		return fmt.Errorf("the launcher could not start %s (exit code %d)", app, code)
	}
	return fmt.Errorf("CreateProcess %s: %w", app, syscall.Errno(code))
}

// newCtrlCSemaphore makes the semaphore the backend releases once per
// ^C, under a unique name for the launcher to open.
func newCtrlCSemaphore() (windows.Handle, string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return 0, "", err
	}
	name := fmt.Sprintf("ptyplex-ctrlc-%d-%x", os.Getpid(), rnd)
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, "", err
	}
	r, _, err := procCreateSemaphoreW.Call(0, 0, 1<<30, uintptr(unsafe.Pointer(n)))
	if r == 0 {
		return 0, "", fmt.Errorf("CreateSemaphore: %w", err)
	}
	return windows.Handle(r), name, nil
}

func openSemaphore(name string) (windows.Handle, error) {
	const semaphoreModifyState = 0x0002
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	r, _, err := procOpenSemaphoreW.Call(windows.SYNCHRONIZE|semaphoreModifyState, 0, uintptr(unsafe.Pointer(n)))
	if r == 0 {
		return 0, err
	}
	return windows.Handle(r), nil
}

func releaseSemaphore(h windows.Handle) error {
	if r, _, err := procReleaseSemaphore.Call(uintptr(h), 1, 0); r == 0 {
		return err
	}
	return nil
}

// child is the launcher's program's process handle, once it runs.
var child atomic.Uintptr

// waitChild waits for the program and returns its exit code.
func waitChild(h windows.Handle) uint32 {
	windows.WaitForSingleObject(h, windows.INFINITE)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return fail("GetExitCodeProcess: " + err.Error())
	}
	return code
}

// launcherCtrl is the launcher's console control handler. Ctrl-C and
// Ctrl-Break are the program's: the launcher does nothing with them and
// says it handled them, so that no other handler (Go's would end the
// process) runs. On the close events, after which Windows ends the
// process once its handlers return, it waits for its program, which got
// the event too, and exits with that program's code: the launcher never
// ends with a code that is not its program's.
func launcherCtrl(event uint32) uintptr {
	switch event {
	case windows.CTRL_C_EVENT, windows.CTRL_BREAK_EVENT:
		return 1
	}
	if h := windows.Handle(child.Load()); h != 0 {
		windows.ExitProcess(waitChild(h))
	}
	return 1
}

var procSetConsoleCtrlHandler = kernel32.NewProc("SetConsoleCtrlHandler")

// setConsoleCtrlHandler is SetConsoleCtrlHandler, which x/sys/windows
// does not have; handler 0 sets whether the process ignores Ctrl-C.
func setConsoleCtrlHandler(handler uintptr, add bool) error {
	a := uintptr(0)
	if add {
		a = 1
	}
	if r, _, err := procSetConsoleCtrlHandler.Call(handler, a); r == 0 {
		return err
	}
	return nil
}

// envOf is our environment without the launcher's own variables.
func envOf() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _ := envName(kv)
		switch strings.ToUpper(name) {
		case launchEnv, launchAppEnv, launchLineEnv, launchCtrlCEnv, launchStartedEnv:
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
