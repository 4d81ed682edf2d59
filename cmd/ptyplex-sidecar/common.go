package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/ptyplex/ptyplex/internal/cescape"
	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/record"
	"github.com/ptyplex/ptyplex/sidecar"
)

// The flags every platform has; --persist's help is the platform's own
// (persistUsage), since Windows has no persistent server.
var (
	recordPath  = flag.String("record", "", "write every frame in both directions to `FILE` (a fixture, see PROTOCOL.md)")
	showVersion = flag.Bool("version", false, "print the version, commit, platform and PTY backend, and exit")
	logExit     = flag.Bool("log-exit", false, "say on stderr why it ended after a clean end of stdin too (otherwise only a signal or an error is reported)")
	persistName = flag.String("persist", "", persistUsage)
)

// persistGiven says whether --persist was on the command line, even as
// --persist "": an empty name (a variable that was not set) is a mistake
// to refuse, not a request for the plain sidecar.
func persistGiven() bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "persist" })
	return given
}

// checkNoArgs ends us with status 2 when arguments follow the flags.
func checkNoArgs() {
	if flag.NArg() == 0 {
		return
	}
	// After the usage, which is long: the last line names the mistake.
	flag.Usage()
	fmt.Fprintf(os.Stderr, "ptyplex-sidecar: unexpected argument %q: it takes flags only (the protocol goes on stdin and stdout)\n", flag.Arg(0))
	os.Exit(2)
}

// newLogger returns the sidecar's logger, which never blocks on stderr
// (stderrSink), and a function that waits, a bounded time, for what it
// logged to be written: run's end calls it.
func newLogger() (*log.Logger, func()) {
	sink := newStderrSink(os.Stderr)
	return log.New(lineEscaper{lineCutter{sink}}, "ptyplex-sidecar: ", log.LstdFlags|log.Lmicroseconds), sink.flush
}

// lineEscaper writes each message of a log.Logger (one Write each, ending
// in a newline) with its control characters escaped as
// cescape.EscapeControls does, the final newline kept. Messages quote what
// a host sent (a command, a directory, a spawn's error about them): a NUL
// or an escape sequence in one reached the terminal of whoever read the
// log as it was, and a newline in one began a line the sidecar never wrote.
type lineEscaper struct{ w io.Writer }

func (e lineEscaper) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	esc := cescape.EscapeControls(msg)
	if esc == msg {
		return e.w.Write(p)
	}
	if _, err := e.w.Write([]byte(esc + "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxLogLine bounds one line of the sidecar's stderr. Lines quote what
// the host sent (a terminal id of up to 64 KiB, a malformed frame's
// error): a host that pipes stderr and reads it rarely would otherwise
// find its pipe full after one such line, and the sidecar waiting on it.
const maxLogLine = 4 << 10

// lineCutter writes each message of a log.Logger (one Write each) cut to
// maxLogLine bytes, saying how much was left out.
type lineCutter struct{ w io.Writer }

func (c lineCutter) Write(p []byte) (int, error) {
	if len(p) <= maxLogLine {
		return c.w.Write(p)
	}
	cut := maxLogLine - 64
	line := make([]byte, 0, maxLogLine)
	line = append(line, p[:cut]...)
	line = fmt.Appendf(line, " ... (%d bytes of this line left out)\n", len(p)-cut)
	if _, err := c.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// recordInto sets up --record on opts and returns the input to read
// frames from and a function that closes the recording. Recording is a
// bystander: if the file cannot be created or written, we say so on
// stderr and go on serving without it.
func recordInto(opts *sidecar.Options, in io.Reader, logger *log.Logger) (io.Reader, func()) {
	if *recordPath == "" {
		return in, func() {}
	}
	if mode, ok := safefile.Exposed(*recordPath); ok {
		logger.Printf("--record %s: other users may read or write it (mode %04o); it is made private (%04o), since a recording holds every key typed",
			*recordPath, uint32(mode), uint32(mode)&0o700)
	}
	rec, err := record.Create(*recordPath)
	if err != nil {
		logger.Printf("not recording: %v", err)
		return in, func() {}
	}
	rec.OnError = func(err error) { logger.Printf("%s: %v", *recordPath, err) }
	opts.Tap = rec.Tap
	return rec.WatchEOF(in), func() { rec.Close() }
}

// exitStatus turns how Run ended into our exit status and its reason.
// signalled names the signal that asked us to stop, or is empty.
func exitStatus(err error, signalled string) (int, string) {
	switch {
	case err != nil && errors.Is(err, sidecar.ErrOutputBroken):
		return 1, fmt.Sprintf("the host stopped reading stdout: %v", err)
	case err != nil:
		return 1, err.Error()
	case signalled != "":
		return 0, "received " + signalled
	}
	return 0, "the host closed stdin"
}

// reportExit writes the last line on stderr, which says why we end,
// unless the host ended us itself by closing stdin (a clean Close says
// nothing, -log-exit says it anyway): a host that sees our stdout close
// can tell a shutdown it asked for from one it did not.
func reportExit(logger *log.Logger, code int, why, signalled string) {
	if code != 0 || signalled != "" || *logExit {
		logger.Printf("exiting with status %d: %s", code, why)
	}
}
