// Command ptyplex-sidecar hosts terminals for a parent process over the
// frame protocol on stdin and stdout (see PROTOCOL.md). It needs no
// arguments; stderr carries diagnostics only.
//
// On Windows the terminals are pseudo-consoles (ConPTY). Standard input
// and output are used as raw handles, so frames pass in binary (no text
// mode exists below the C runtime, which Go does not use). Each
// terminal's processes are in a job object that dies with us, which is
// what the Unix watchdog does; --persist is not available.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/sidecar"
	"golang.org/x/sys/windows"
)

const persistUsage = "not available on Windows"

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s\n\nSpeaks the ptyplex frame protocol on stdin/stdout; see PROTOCOL.md.\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	checkNoArgs()
	if *showVersion {
		fmt.Println(version.String("ptyplex-sidecar", ptyhost.Backend()))
		return
	}
	if persistGiven() {
		fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --persist is not supported on Windows (the persistent server needs Unix sockets and re-executes itself); see docs/platforms.md")
		os.Exit(2)
	}
	dropOwnConsole()
	sizeProcs()
	os.Exit(run())
}

// sayWhatWeAre tells someone who ran us by hand in a console what we are,
// before they type a line, which we would read as a frame header (a
// corrupt stream). The note is Unix's, without its pointer to ptyplex,
// which does not run on Windows.
func sayWhatWeAre() {
	if isConsole(windows.STD_INPUT_HANDLE) {
		fmt.Fprintln(os.Stderr, "ptyplex-sidecar: standard input is a terminal; this program speaks binary frames (PROTOCOL.md) with the program that starts it, such as an editor or an agent. See --help. Ctrl-C ends it.")
	}
}

// dropOwnConsole detaches us from a console that was made for us alone.
// A GUI host that starts us without CREATE_NO_WINDOW (node's windowsHide)
// gets a console window for us; with our stdio on pipes we have no use
// for it, and once no process is attached the window goes away. A
// console shared with others (a cmd.exe we were typed into) is kept.
func dropOwnConsole() {
	if isConsole(windows.STD_INPUT_HANDLE) || isConsole(windows.STD_OUTPUT_HANDLE) {
		return
	}
	var pids [2]uint32
	n, _, _ := procGetConsoleProcessList.Call(uintptr(unsafe.Pointer(&pids[0])), 2)
	if n == 1 {
		procFreeConsole.Call()
	}
}

var (
	kernel32                  = windows.NewLazySystemDLL("kernel32.dll")
	procGetConsoleProcessList = kernel32.NewProc("GetConsoleProcessList")
	procFreeConsole           = kernel32.NewProc("FreeConsole")
)

func isConsole(std uint32) bool {
	h, err := windows.GetStdHandle(std)
	if err != nil || h == 0 || h == windows.InvalidHandle {
		return false
	}
	var mode uint32
	return windows.GetConsoleMode(h, &mode) == nil
}

func run() int {
	logger, flushLog := newLogger()
	defer flushLog()
	opts := sidecar.Options{Log: logger}
	in, closeRecord := recordInto(&opts, os.Stdin, logger)
	defer closeRecord()
	sc := sidecar.New(os.Stdout, opts)
	watchStdout(func() {
		sc.Stop(fmt.Errorf("%w: the host closed its end of stdout", sidecar.ErrOutputBroken))
	})

	// Ctrl-C, Ctrl-Break and a closing console window shut down like the
	// end of stdin, and say so.
	var signalled atomic.Value
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range sigs {
			name := signalName(sig)
			logger.Printf("received %s: shutting down", name)
			signalled.CompareAndSwap(nil, name)
			sc.Stop(nil)
		}
	}()
	// Said only once Ctrl-C is caught: the note tells the person to press
	// it, and one pressed on reading it must end us with our exit line
	// (before, Windows' default handler could still kill us silently).
	sayWhatWeAre()

	err := sc.Run(in)
	sig, _ := signalled.Load().(string)
	code, why := exitStatus(err, sig)
	reportExit(logger, code, why, sig)
	return code
}

// signalName names sig as the Unix sidecar does, and as PROTOCOL.md's
// exit lines read ("exiting with status 0: received SIGTERM"); Go calls
// them "interrupt" and "terminated" on Windows. Ctrl-C and Ctrl-Break
// arrive as SIGINT; a closing console, a logoff or a shutdown as SIGTERM.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return fmt.Sprint(sig)
}

// watchStdout calls gone once the host has closed its end of our stdout,
// when stdout is a pipe, as the Unix sidecar's poll(2) does. Until then
// we learned it only at our next write, which idle terminals never make:
// the sidecar and every terminal outlived a host that closed its end of
// our stdout but not our stdin. Windows has no wait for a pipe's other
// end to close without reading or writing it, but the pipe's state says
// so (FILE_PIPE_CLOSING_STATE once the other end's last handle is
// closed), so it is asked every stdoutCheck. Asking takes no data and
// never fails a write; while a write to a full pipe is blocked the
// question waits behind it, and that write fails when the host goes.
func watchStdout(gone func()) {
	h := windows.Handle(os.Stdout.Fd())
	if st, ok := pipeState(h); !ok || st != filePipeConnected {
		return // a file, a console, or no stdout: nothing to watch
	}
	go func() {
		tick := time.NewTicker(stdoutCheck)
		defer tick.Stop()
		for range tick.C {
			st, ok := pipeState(h)
			if !ok {
				return
			}
			if st == filePipeClosing || st == filePipeDisconnected {
				gone()
				return
			}
		}
	}()
}

// stdoutCheck is how often watchStdout asks about stdout's pipe: the
// host's going is noticed this much later at most, for one small system
// call per check.
const stdoutCheck = 250 * time.Millisecond

// The states of a pipe end (FILE_PIPE_LOCAL_INFORMATION.NamedPipeState).
const (
	filePipeDisconnected = 1
	filePipeConnected    = 3
	filePipeClosing      = 4
)

// pipeLocalInformation is FILE_PIPE_LOCAL_INFORMATION, which x/sys/windows
// does not define.
type pipeLocalInformation struct {
	NamedPipeType, NamedPipeConfiguration, MaximumInstances, CurrentInstances uint32
	InboundQuota, ReadDataAvailable, OutboundQuota, WriteQuotaAvailable       uint32
	NamedPipeState, NamedPipeEnd                                              uint32
}

// pipeState is the state of the pipe end h, or false when h is no pipe
// (an anonymous pipe is a named pipe to the system).
func pipeState(h windows.Handle) (uint32, bool) {
	const filePipeLocalInformation = 24 // FILE_INFORMATION_CLASS
	var info pipeLocalInformation
	var iosb windows.IO_STATUS_BLOCK
	if err := windows.NtQueryInformationFile(h, &iosb, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), filePipeLocalInformation); err != nil {
		return 0, false
	}
	return info.NamedPipeState, true
}
