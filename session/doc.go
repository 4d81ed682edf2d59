// Package session is the per-session daemon behind `ptyplex start`: it runs
// one child in a PTY, keeps its screen in a terminal emulator, and answers
// newline-delimited JSON requests on a Unix socket (INPUT, OUTPUT, STATUS,
// WAIT, KILL, STOP, DEBUG, RESIZE), wire-compatible with interminai.
//
// Goroutines and what they own:
//   - the PTY reader (pty.go) feeds the screen, raises the activity flag and
//     wakes waiters; it is the only writer of screen content;
//   - the reply writer (pty.go) sends terminal-query answers back to the PTY,
//     so a child that stops reading input cannot stall the reader;
//   - the exit watcher (pty.go) records the child's exit status;
//   - the accept loop (server.go) checks the peer and starts one reader per
//     connection (conn.go), which parses one request and queues it;
//   - the request handler (server.go) executes queued requests one at a time
//     in arrival order.
//
// State shared between them lives in one place, the state type (state.go),
// behind one mutex; changes are broadcast by closing a channel.
package session
