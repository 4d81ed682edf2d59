//go:build unix

// Package persist is the persistent sidecar: a server, one per user and
// name, that owns terminals independently of any one host connection. A
// host connects over a private Unix socket (usually through the bridge,
// `ptyplex-sidecar --persist NAME`), speaks the frame protocol of the plain
// sidecar, and may leave; the terminals go on, and their output goes on
// into a bounded journal per terminal, addressed by byte offsets since
// OPEN. A later connection lists the terminals and attaches to them at the
// offsets it has, and receives exactly the bytes it is missing.
//
// All state that would have to move to another process for a live upgrade
// (PTY masters, pids, journals, offsets, credit) is in Server.terms, one
// term each; connections hold nothing a terminal needs.
//
// What a terminal is apart from its journal and its holders is the plain
// sidecar's, from package engine: the lifecycle (engine.State and its one
// mover), the end of a child (engine.Drain: kill what is left, hang up a
// PTY something unknown keeps open) and the input queue with its byte
// budget and its direct write for keystrokes (engine.InputQueue).
package persist
