// Package engine is what the plain sidecar and the persistent server
// share about a terminal: its lifecycle (State and its one mover, Move;
// IfRunning, the guard of every signal), the timing of its end and the
// signals of CLOSE (Hangup, Kill), the supervision that waits for its
// PTY to drain (and hangs up one that something we cannot find keeps
// open), the host's CREDIT (Credit, and Gate for a reader that may read
// only what it may send), the input queue with its byte bounds,
// keystroke fast path and writer goroutine (InputQueue.Drive), and the
// frame reader that reads on while a full input queue holds the dispatch
// back (Lookahead).
package engine
