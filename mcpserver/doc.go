// Package mcpserver serves ptyplex sessions to AI agents over the Model
// Context Protocol: `ptyplex mcp` runs it on stdio, and an MCP client
// (Claude, Cursor, Codex, Gemini CLI, ...) gets tools to start programs in
// terminals, type into them, read the screen back and wait for it to change.
//
// The sessions are the very daemons `ptyplex start` makes: the server runs
// its own binary as `ptyplex start ... -- COMMAND` and then talks to the
// socket with package session, so a human can watch the same session with
// `ptyplex output --socket PATH` while an agent drives it.
//
// Lifetimes: the server remembers the sessions it started (registry.go).
// When the client disconnects (stdin reaches end of file) or the server is
// told to stop, Run stops every session that was not started as persistent
// (cleanup.go). Tool handlers run on the SDK's goroutines; each daemon
// request runs in a goroutine of its own so that a cancelled tool call
// returns at once (call.go).
package mcpserver
