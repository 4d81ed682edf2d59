//go:build unix

// Package session is the per-session daemon behind `ptyplex start`: it runs
// one child in a PTY, keeps its screen in a terminal emulator, and answers
// newline-delimited JSON requests on a Unix socket (INPUT, OUTPUT, STATUS,
// WAIT, KILL, STOP, DEBUG, and the additions below), wire-compatible with
// interminai. The protocol's types, the parsing of request fields and the
// client calls are in package session/wire, which clients import without
// the daemon.
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
// Beyond interminai's protocol (all of which is kept as is), in the order
// of PROTOCOL.md section 2, whose headings name them and give the detail:
//
//   - Socket and connection: a client that hangs up while its WAIT is
//     pending ends that WAIT; the next request is served at once. A client
//     that only shuts down its sending side still gets its answer. An error
//     a client acts on carries a "code" after its unchanged text
//     (wire.ErrorCode: RUN's no_shell_integration).
//   - Limits and peer checks: connections from another user are refused
//     with "Permission denied: ..." (SO_PEERCRED); requests are at most
//     10 MB, and open connections, buffered request bytes and the time to
//     send a request line are bounded, answered "Daemon busy: ..." or
//     "Invalid request: ..." beyond (limits.go).
//   - Requests: RESIZE {"cols":C,"rows":R} resizes the screen and the PTY
//     (the child gets SIGWINCH) and answers {"size":{"rows":R,"cols":C}}.
//     OUTPUT accepts "from"/"to" as numeric strings too; "from" may be "-".
//     OUTPUT "format":"png" answers the visible screen as a PNG image,
//     rendered by the daemon (screenshot.go, wire.ScreenshotData). The exit
//     code of a child killed by a signal is 128+signal.
//   - Additions: WAIT takes an optional "timeout_ms"; when it passes first
//     the answer has "timed_out":true (activity mode: activity and exited
//     false). STATUS also answers "size", "scrollback_available",
//     "scrollback_capacity" and the modes a client needs
//     ("app_cursor_keys", "bracketed_paste", "alt_screen", "title").
//   - Timeouts: "timeout_ms" is refused when negative and clamped, never
//     wrapped, when too large (wire/timeout.go).
//   - Socket paths: a path too long for sun_path is refused with an error
//     naming the limit (wire/sockpath.go).
//   - Nested fields: every request's fields may also come in an object
//     under "data"; a top-level field wins (wire/nested.go).
//   - Pending WAITs and output generations: a pending WAIT does not hold
//     back other requests (async.go). INPUT/OUTPUT/STATUS "with_gen" answer
//     the output generation; WAIT "after_gen" waits for output beyond it
//     (gen.go).
//   - Waiting for input: STATUS "input" adds "waiting_for_input", and WAIT
//     "input" returns once the program waits for its user, as the kernel
//     sees it, or after a quiet period where it cannot tell (inputwait.go,
//     wait.go).
//   - Commands with exit codes: from a shell's OSC 133 marks
//     (--shell-integration), COMMANDS lists the commands with their exit
//     codes and output lines, and RUN waits for the prompt, types a
//     command and answers its exit code and output (commands.go).
//   - Changes reads and read budgets: OUTPUT "changes" answers a token,
//     "since": token only what changed after that read, "max_chars" cuts
//     the lines farthest from the cursor (output.go, wire.BudgetWindow).
//   - ATTACH turns the connection into a raw terminal stream (attach.go).
//   - Idle exit and the session registry: with --idle-exit the daemon ends
//     itself once the program has exited and no request came for that long
//     (idle.go); every daemon records itself in a per-user registry
//     (registry.go) that wire.List reads.
package session
