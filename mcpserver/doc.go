//go:build unix

// Package mcpserver serves ptyplex sessions to AI agents over the Model
// Context Protocol: `ptyplex mcp` runs it on stdio, and an MCP client
// (Claude, Cursor, Codex, Gemini CLI, ...) gets tools to start programs in
// terminals, type into them, read the screen back and wait for it to change.
//
// The sessions are the very daemons `ptyplex start` makes: the server runs
// its own binary as `ptyplex start ... -- COMMAND` (launch.go) and then
// talks to the socket with package session/wire, so a human can watch the
// same session with `ptyplex output --socket PATH` while an agent drives
// it.
//
// Protocol: the SDK's stdio transport is replaced by a line reader of ours
// (transport.go) that answers malformed input with JSON-RPC errors instead
// of ending the connection, echoes request ids byte for byte (the SDK sees
// ids of its own), answers batches as one array, drops the responses to
// cancelled requests, and ends the input when Run's context ends, so a
// signal cancels the calls in progress.
//
// Lifetimes: the server remembers the sessions it started (registry.go).
// When the client disconnects (stdin reaches end of file) or the server is
// told to stop, Run stops every session that was not started as persistent
// (Server.Cleanup in server.go, stopSession in stop.go). Tool handlers run
// on the SDK's goroutines, and each daemon request runs on its handler's
// goroutine; a cancelled tool call still returns at once, because the
// request's context closes its connection (call.go, wire.CallDataContext),
// which also ends a WAIT pending in the daemon.
package mcpserver
