//go:build unix

// Package waitcond is the one implementation of screen waits shared by the
// CLI (`ptyplex wait`, `ptyplex input --wait-...`) and the MCP server's
// wait and input tools: the modes and the event-driven loop over the
// session protocol. The text a condition is tested against
// (wire.MatchText, wire.Semantics) is defined beside the protocol, in
// package session/wire.
//
// Nothing here polls. Each round blocks in the daemon (WAIT) until output
// or exit, then re-reads the screen once. Waits tied to an input use the
// daemon's output generation (WAIT "after_gen"), so they never test the
// screen as it was before the input, and never consume the activity flag
// that other clients may be using.
package waitcond
