// Package engine is what the plain sidecar and the persistent server
// share about a terminal: the timing of its end, the supervision that
// waits for its PTY to drain (and hangs up one that something we cannot
// find keeps open), and the bounds on input queued for children that do
// not read.
package engine
