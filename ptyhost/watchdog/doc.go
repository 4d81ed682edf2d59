//go:build unix

// Package watchdog cleans up after a terminal host that died without
// tearing its terminals down.
//
// A process that hosts terminals can die without tearing them down: SIGKILL,
// the OOM killer, a crash in the runtime. The kernel then does two things
// for us: on Linux each direct child gets its parent-death signal
// (Pdeathsig, SIGKILL; ptyhost's Linux backend only), and each PTY master
// closes, which hangs the terminal up and sends SIGHUP to its foreground
// process group. Neither reaches a background job of an interactive shell
// that ignores SIGHUP, nor a daemon that left the session but kept the PTY
// as its stdio.
//
// The watchdog closes that gap. It is a second, tiny process (the host's
// own executable re-run in watchdog mode: the host's main calls Run when
// IsWatchdog says so) that reads a pipe from its parent: "+" lines announce
// a terminal (session id, the leader's start time, the PTY slave's
// identity: see ptyhost.Identity), "-" lines retire it. The parent holds
// the only write end, so the pipe reaches end of file exactly when the
// parent is gone, however it died. Then the watchdog kills every process of
// every terminal still announced (ptyhost.KillIdentified), and exits.
// After an orderly shutdown nothing is announced any more and it just
// exits.
//
// Programs in the terminals run as the same user as the host, so the
// watchdog defends against mistakes and mischief, not against that user:
//
//   - every line carries a per-run token, written before the watchdog
//     starts, so a program that reopens the pipe cannot retire its own
//     terminal;
//   - a line longer than any the parent writes (a program writing 70,000
//     bytes without a newline) is skipped, and only a real end of file
//     ends the watchdog, so garbage cannot make it kill every terminal;
//   - the watchdog, and the sidecar that starts it, are not dumpable
//     (ptyhost.ForbidInspection), so their /proc/PID/fd entries cannot be
//     opened by the user's other processes in the first place; a new
//     watchdog gets its pipe, with the token already in it, only once
//     it is not dumpable (handoff.go), so there is no window at its start;
//   - a program can still kill the watchdog; the parent then says so and
//     starts a new one that learns every live terminal (restart.go).
package watchdog
