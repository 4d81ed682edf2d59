// Package testproc ties every process a test binary starts, however far
// down (daemons that detach into their own sessions, the programs they
// run, sshd, busy loops), to the test binary's life, and makes the
// race-built binaries the tests start exit promptly.
//
// Call Start first thing in TestMain and pass m.Run's code through the
// function it returns:
//
//	func TestMain(m *testing.M) {
//		finish := testproc.Start()
//		...
//		os.Exit(finish(m.Run()))
//	}
//
// Every process started from then on inherits a mark in its environment
// (OwnerEnv, one token per test binary; nested runs add theirs). At the
// end, finish gives processes that are still shutting down a moment, then
// kills the ones that carry the mark and fails the run, naming them. A
// sweeper process started by Start holds one end of a pipe: when the test
// binary dies any other way (a test timeout's panic, SIGKILL), the pipe
// closes and the sweeper kills what carries the mark. On systems without
// /proc only the race setting applies.
package testproc

import (
	"os"
	"strings"
)

// OwnerEnv is the environment variable that marks a test run's processes:
// space-separated tokens, the outermost run's first. `make test` sets one
// for the whole run and checks for leftovers with it afterwards
// (scripts/leftovers.sh).
const OwnerEnv = "PTYPLEX_TEST_OWNER"

// sweepEnv, when set, makes the test binary the sweeper of that token.
const sweepEnv = "PTYPLEX_TESTPROC_SWEEP"

// raceExit is added to GORACE: a race-built program sleeps atexit_sleep_ms
// (1000 by default) before it exits, so that reports from other threads
// can still print. The tests start thousands of short-lived ptyplex and
// sidecar processes and wait for most of them to exit; one second each
// was most of the suite's time. Reports found before the exit still
// print; 20 ms is left for those racing with it.
const raceExit = "atexit_sleep_ms=20"

// Gorace returns a GORACE value for the binaries the tests start: the
// current one, with logPath as log_path when it is not empty, and the
// short exit sleep unless GORACE already sets one.
func Gorace(logPath string) string {
	var opts []string
	for _, o := range strings.Fields(os.Getenv("GORACE")) {
		if logPath != "" && strings.HasPrefix(o, "log_path=") {
			continue
		}
		opts = append(opts, o)
	}
	if logPath != "" {
		opts = append(opts, "log_path="+logPath)
	}
	if !strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms=") {
		opts = append(opts, raceExit)
	}
	return strings.Join(opts, " ")
}

// SetGorace sets GORACE for this process's children (see Gorace).
func SetGorace(logPath string) { os.Setenv("GORACE", Gorace(logPath)) }

// spareUnder is the process whose descendants are not this test binary's
// to end (SpareDescendantsOf); 0 for none.
var spareUnder int

// SpareDescendantsOf exempts the processes under pid (its children,
// theirs, ...) from the end-of-run check, marked or not: pid is a server
// started before this run, meant to outlive it, that runs programs for
// the run's hosts with their environment (the mark too), and whoever
// started it ends them (the sidecar suite run twice through one
// persistent server, scripts/test-readopt.sh). Call it after Start.
func SpareDescendantsOf(pid int) {
	spareUnder = pid
	tellSweeper(pid)
}

// hasToken reports whether an OwnerEnv value carries tok.
func hasToken(value, tok string) bool {
	for _, f := range strings.Fields(value) {
		if f == tok {
			return true
		}
	}
	return false
}
