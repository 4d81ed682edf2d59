//go:build unix

// Command ptyplex-sidecar hosts terminals for a parent process over the
// frame protocol on stdin and stdout (see PROTOCOL.md). It needs no
// arguments; stderr carries diagnostics only.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/inherited"
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
	"github.com/ptyplex/ptyplex/sidecar"
	"github.com/ptyplex/ptyplex/sidecar/persist"
	"golang.org/x/sys/unix"
)

const persistUsage = "bridge stdin/stdout to this user's persistent sidecar `NAME`, starting it if none runs; its terminals outlive the connection (see docs/persist.md)"

func main() {
	nameProcess()
	if watchdog.IsWatchdog() {
		// This is our own watchdog process, started by run below.
		os.Exit(watchdog.Run(os.Stdin))
	}
	// The programs in our terminals run as our user, and could otherwise
	// open our descriptors through /proc/PID/fd: the watchdog's pipe, the
	// host's stdin and stdout, every other terminal's PTY master. Non-
	// dumpable, those entries are root's; each program's execve makes it
	// dumpable again, so this is not inherited by the terminals.
	if err := ptyhost.ForbidInspection(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
	}
	// The keeper of a live upgrade (see sidecar/persist/keeper_linux.go)
	// takes the terminals' descriptors only now that it is non-dumpable,
	// and its socket is an inherited descriptor the next step would close.
	if persist.IsKeeper(os.Args[1:]) {
		os.Exit(persist.Keep())
	}
	// Descriptors our caller left open must not reach the terminals'
	// programs, nor be held open by us (see package inherited). A
	// persistent server that re-executed itself left its own: the
	// terminals' PTY masters, its socket; serve closes the rest after it
	// took those over.
	if !resuming(os.Args[1:]) {
		if _, err := inherited.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		}
	}
	// Before anything else: children must not inherit a blocked signal mask.
	if err := ptyhost.ClearInheritedSignalMask(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
	}
	sizeProcs()
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s\n\nSpeaks the ptyplex frame protocol on stdin/stdout; see PROTOCOL.md.\n", os.Args[0])
		shown := flag.NewFlagSet("", flag.ContinueOnError)
		shown.SetOutput(os.Stderr)
		flag.VisitAll(func(f *flag.Flag) {
			if !hiddenFlags[f.Name] {
				shown.Var(f.Value, f.Name, f.Usage)
				shown.Lookup(f.Name).DefValue = f.DefValue
			}
		})
		shown.PrintDefaults()
	}
	flag.Parse()
	checkNoArgs()
	if *handoverFormat {
		fmt.Println(persist.HandoverLine())
		return
	}
	if *showVersion {
		fmt.Println(version.String("ptyplex-sidecar", ptyhost.Backend()))
		return
	}
	if code, ok := persistMode(); ok {
		os.Exit(code)
	}
	os.Exit(run())
}

// sayWhatWeAre tells someone who ran us by hand in a terminal what we
// are, before they type a line, which we would read as a frame header
// (a corrupt stream): for the plain sidecar and the bridge, which read
// frames on stdin, not for --list and the other actions.
func sayWhatWeAre() {
	if ptyhost.IsTerminal(os.Stdin) {
		fmt.Fprintln(os.Stderr, "ptyplex-sidecar: standard input is a terminal; this program speaks binary frames (PROTOCOL.md) with the program that starts it, such as an editor or an agent. See --help; for terminals you type into, use ptyplex (ptyplex --help). Ctrl-C ends it.")
	}
}

func run() int {
	logger, flushLog := newLogger()
	defer flushLog()
	growPipe(os.Stdout)
	opts := sidecar.Options{Log: logger}
	// The watchdog kills every terminal's processes if we die without
	// tearing down (see package watchdog). Without it, only the PTY
	// hangup (and with the Linux backend the parent-death signal) is left.
	wd, err := watchdog.Start(logger.Printf)
	if err != nil {
		logger.Printf("running without a watchdog: %v", err)
	} else {
		opts.Watchdog = wd
	}
	in, closeRecord := recordInto(&opts, pollableStdin(), logger)
	defer closeRecord()
	sc := sidecar.New(os.Stdout, opts)
	watchStdout(func() {
		sc.Stop(fmt.Errorf("%w: the host closed its end of stdout", sidecar.ErrOutputBroken))
	})

	// Every signal whose default action would end us silently shuts down
	// like the end of stdin instead, and says so. SIGPIPE is caught so that
	// a dead host shows up as a write error we handle, instead of killing
	// us before the children are cleaned up.
	var signalled atomic.Value // the name of the signal that asked us to stop
	// Those we were started with ignored (nohup ignores SIGHUP) stay ignored.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM} {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGPIPE {
				continue
			}
			name := unix.SignalName(sig.(syscall.Signal))
			logger.Printf("received %s: shutting down", name)
			signalled.CompareAndSwap(nil, name)
			sc.Stop(nil)
		}
	}()
	// Said only once the signals are caught: it tells the person to press
	// Ctrl-C, and one pressed on reading it must end us with our exit line.
	sayWhatWeAre()

	err = sc.Run(in)
	sig, _ := signalled.Load().(string)
	code, why := exitStatus(err, sig)
	if wd != nil {
		wd.Close() // an orderly goodbye, so the watchdog ends quietly
	}
	// (A SIGKILL is reported by the watchdog instead.)
	reportExit(logger, code, why, sig)
	return code
}
