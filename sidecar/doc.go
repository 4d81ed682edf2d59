// Package sidecar multiplexes PTY terminals over one frame stream.
//
// The pieces and their goroutines:
//
//   - Run's caller goroutine is the dispatch loop: it reads host frames in
//     order and acts on them without ever blocking on a terminal (input goes
//     through each terminal's queue).
//   - The output stream is held by one goroutine at a time (writer.go):
//     a terminal's reader, supervisor or spawn goroutine that finds it free
//     writes its own frame and what others queued meanwhile, up to a budget;
//     the writer goroutine writes what the dispatch loop queued and what an
//     inline writer left. Everything the host receives passes through the
//     writer's bounded lanes, so a host that stops reading stalls the PTY
//     readers, then the children, and memory stays flat.
//   - Each terminal has a reader (PTY -> OUTPUT frames, gated by credit), an
//     input writer (queue -> PTY) and a supervisor that waits for the child,
//     cleans up its session and sends EXIT after the last OUTPUT
//     (terminal.go). All three end when the terminal does. Where the
//     terminal is in its life (spawning, live, closing, reaped, gone) is
//     one state under its mutex (termState), the one thing every signal
//     and every late answer checks. The lifecycle, the end of a child,
//     credit and the input queue are package engine's, shared with the
//     persistent server.
//   - Each OPEN gets a spawn goroutine (spawn.go), at most maxSpawns of them
//     starting children at a time: it starts the child, queues OPENED and
//     applies the frames that came for the terminal meanwhile, then ends.
package sidecar
