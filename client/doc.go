// Package client lets a Go program host terminals through a ptyplex-sidecar
// process: it starts the sidecar, owns its stdin and stdout, and multiplexes
// any number of terminals over that one frame stream.
//
// The shape follows x/crypto/ssh's channel multiplexer:
//
//   - One reader goroutine per Client (its Stream's) decodes the sidecar's frames and
//     dispatches them by type: OPENED and ERROR settle pending opens,
//     OUTPUT lands in the terminal's receive window, EXIT finishes the
//     terminal. It never blocks on a caller, so one slow terminal cannot
//     hold up the others.
//   - Writes to the sidecar (OPEN, INPUT, RESIZE, CLOSE, CREDIT) come from
//     callers' goroutines and are serialised by one mutex, each frame in a
//     single write.
//   - Flow control works like an SSH window: a terminal is opened with a
//     credit window of W bytes, so the sidecar reads at most W bytes from
//     the PTY that the caller has not yet consumed. As the caller Reads,
//     the consumed bytes are granted back with CREDIT frames, in batches of
//     at least W/2. A caller that stops reading therefore stops the child
//     (its writes block on the full PTY) instead of growing memory.
//     Options.Raw opens a terminal without credit; its output is buffered
//     without bound.
//
// Terminal.Signal sends a signal to a terminal's foreground process group
// (SIGNAL) and waits for the sidecar's word on it.
//
// If the sidecar dies or its stream turns corrupt, every pending Open fails
// and every live terminal finishes with an error that says so. Client.Close
// closes the sidecar's stdin, which makes it kill every terminal, and waits
// for their final EXIT frames.
//
// With Options.Reconnect and a persistent sidecar (`ptyplex-sidecar
// --persist NAME`, whose terminals outlive the connection) a transport
// that ends without Close is not the end: terminals stay open, writes
// queue (bounded), and the client starts the transport again with backoff
// and ATTACHes every terminal at the offset of the bytes it received, read
// or still buffered, so that Read continues with no gap and no repeat. A
// keepalive (PING every few seconds) notices a transport that hangs
// instead of ending. ReconnectPolicy.OnEvent reports the drop, each
// attempt, the resume or giving up. See docs/remote.md.
//
// Client.Attach with AttachOptions{View: true} views a persistent terminal
// another connection holds: its output from an offset of the caller's,
// within the terminal's own credit window, while Write, Resize and Close
// fail with ErrViewing. A viewer never slows the holder: one that falls
// behind the server's journal reads the server's repaint of the screen in
// place of the bytes it lost (Lost counts them). Terminal.HandOver gives a
// held terminal to a viewer. See docs/persist.md.
//
// Underneath, a Stream is the frame level: the process, the serialised
// writes, the one reader goroutine and how the stream ends. Client
// dispatches on it; hosts that want the frames themselves (the module's
// end-to-end tests, ptyplex-bench) use a Stream directly, so that there is
// one Go implementation of the host side of the protocol.
//
// All methods are safe for concurrent use.
package client
