// Package session is the per-session daemon behind `ptyplex start`: it runs
// one child in a PTY, keeps its screen in a terminal emulator, and answers
// newline-delimited JSON requests on a Unix socket (INPUT, OUTPUT, STATUS,
// WAIT, KILL, STOP, DEBUG, RESIZE), wire-compatible with interminai. The
// protocol's types, the parsing of request fields and the client calls are
// in package session/wire, which clients import without the daemon.
//
// Goroutines and what they own:
//   - the PTY reader (pty.go) feeds the screen, raises the activity flag and
//     wakes waiters; it is the only writer of screen content;
//   - the reply writer (pty.go) sends terminal-query answers back to the PTY,
//     so a child that stops reading input cannot stall the reader;
//   - the exit watcher (pty.go) records the child's exit status;
//   - the accept loop (daemon.go) checks the peer and starts one reader per
//     connection (conn.go), which reads one request line and queues it;
//   - the request handler (Serve in daemon.go, handle in requests.go)
//     executes queued requests one at a time in arrival order, except
//     WAIT, which it hands to a goroutine of its own (async.go) so that a
//     pending WAIT holds back nobody;
//   - each ATTACH connection (attach.go) has an output writer and an input
//     reader; the PTY reader only appends to the attacher's bounded queue;
//   - with --idle-exit, the idle watcher (idle.go) ends the daemon once the
//     program has exited and no request came for that long.
//
// State shared between them lives in one place, the state type (state.go),
// behind one mutex; changes are broadcast by closing a channel.
//
// # Protocol additions
//
// Beyond interminai's protocol (all of which is kept as is):
//
//   - RESIZE {"cols":C,"rows":R} resizes the screen and the PTY (the child
//     gets SIGWINCH) and answers {"size":{"rows":R,"cols":C}}.
//   - WAIT takes an optional "timeout_ms"; when it passes first the answer
//     has "timed_out":true (activity mode: activity and exited false).
//   - STATUS also answers "size", "scrollback_available" and
//     "scrollback_capacity".
//   - OUTPUT accepts "from"/"to" as numeric strings too; "from" may be "-".
//   - OUTPUT "format":"png" answers the visible screen as a PNG image,
//     rendered by the daemon (screenshot.go, wire.ScreenshotData).
//   - A client that hangs up while its WAIT is pending ends that WAIT; the
//     next request is served at once. A client that only shuts down its
//     sending side still gets its answer.
//   - Connections from another user are refused with
//     "Permission denied: ..." (SO_PEERCRED).
//   - The exit code of a child killed by a signal is 128+signal.
//   - A pending WAIT does not hold back other requests.
//   - INPUT/OUTPUT/STATUS "with_gen" answer the output generation; WAIT
//     "after_gen" waits for output beyond it (gen.go).
//   - OUTPUT "changes" answers a token, "since": token only what changed
//     after that read, "max_chars" cuts lines from the top (changes.go).
//   - ATTACH turns the connection into a raw terminal stream (attach.go).
//   - Every daemon records itself in a per-user registry (registry.go)
//     that wire.List reads.
package session
