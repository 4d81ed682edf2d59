// Command ptyplex-sidecar hosts terminals for a parent process over the
// frame protocol on stdin and stdout (see PROTOCOL.md). It needs no
// arguments; stderr carries diagnostics only.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/record"
	"github.com/ptyplex/ptyplex/sidecar"
)

var (
	recordPath  = flag.String("record", "", "write every frame in both directions to `FILE` (a fixture, see PROTOCOL.md)")
	showVersion = flag.Bool("version", false, "print the version, commit, platform and PTY backend, and exit")
)

func main() {
	if ptyhost.IsWatchdog() {
		// This is our own watchdog process, started by run below.
		os.Exit(ptyhost.RunWatchdog(os.Stdin))
	}
	// Before anything else: children must not inherit a blocked signal mask.
	if err := ptyhost.ClearInheritedSignalMask(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
	}
	limitProcs()
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s\n\nSpeaks the ptyplex frame protocol on stdin/stdout; see PROTOCOL.md.\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println(version.String("ptyplex-sidecar"))
		return
	}
	os.Exit(run())
}

func run() int {
	logger := log.New(os.Stderr, "ptyplex-sidecar: ", log.LstdFlags|log.Lmicroseconds)
	growPipe(os.Stdout)
	opts := sidecar.Options{Log: logger}
	// The watchdog kills every terminal's processes if we die without
	// tearing down (see ptyhost/watchdog.go). Without it, only the PTY
	// hangup (and with the Linux backend the parent-death signal) is left.
	if wd, err := ptyhost.StartWatchdog(); err != nil {
		logger.Printf("running without a watchdog: %v", err)
	} else {
		opts.Watchdog = wd
	}
	var in io.Reader = os.Stdin
	if *recordPath != "" {
		// Recording is a bystander: if the file cannot be created or
		// written, we say so on stderr and go on serving without it.
		if rec, err := record.Create(*recordPath); err != nil {
			logger.Printf("not recording: %v", err)
		} else {
			rec.OnError = func(err error) { logger.Printf("%s: %v", *recordPath, err) }
			defer rec.Close()
			opts.Tap = rec.Tap
			in = rec.WatchEOF(os.Stdin)
		}
	}
	sc := sidecar.New(os.Stdout, opts)

	// SIGTERM and SIGINT shut down like the end of stdin. SIGPIPE is caught
	// so that a dead host shows up as a write error we handle, instead of
	// killing us before the children are cleaned up.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGPIPE {
				continue
			}
			logger.Printf("received %v: shutting down", sig)
			sc.Stop(nil)
		}
	}()

	err := sc.Run(in)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, sidecar.ErrOutputBroken):
		logger.Printf("host went away: %v", err)
	default:
		logger.Printf("%v", err)
	}
	return 1
}
