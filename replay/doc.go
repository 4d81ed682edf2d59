// Package replay checks a fresh ptyplex-sidecar against a recorded frame
// fixture (see PROTOCOL.md, "Frame fixtures").
//
// The replayer sends the fixture's host frames to a new sidecar in their
// recorded order and compares what comes back with the recording by
// meaning, not by bytes. Per terminal id:
//
//   - the sequence of control frames (OPENED, ERROR, EXIT) must match in
//     type and fields, except OPENED's pid;
//   - the concatenated OUTPUT must be identical, unless a note in the
//     fixture says the child is not deterministic ("length": same byte
//     count; "ignore": not compared);
//   - the protocol's promises must hold: nothing before OPENED or after
//     EXIT, and never more output than the credit granted so far.
//
// Pacing rule. Correctness never depends on timing, but some fixtures need
// a host frame to follow output (type only after the prompt came, grant
// credit only after the terminal parked). So before sending each host frame
// (and before closing stdin where the recording shows the host did), the
// replayer waits until, for every terminal, the sidecar has produced at
// least as many control frames as the recording shows before that point,
// and at least as many output bytes unless the terminal's output is
// ignored. The wait has a deadline (Options.StepTimeout); missing it is a
// mismatch and the replay stops sending.
//
// The rule cannot deadlock on a faithful sidecar: the recorder logs a host
// frame when the sidecar reads it, before acting on it, so nothing a host
// frame causes can appear before it in the fixture. Whatever precedes a
// host frame was produced without it, and will be produced again.
package replay
