//go:build unix

// Package wire is the session protocol apart from the daemon that serves
// it: the request and answer types, the client calls (with their checks
// that the socket is served by us or root), the reading of request fields
// (nested under "data" or not), size parsing, the session registry that
// `ptyplex list` reads, and the text a screen wait is matched against.
//
// The daemon (package session) and its clients (the CLI, the MCP server,
// internal/session/waitcond) both import it, so a client never links the daemon
// just to speak to one.
package wire
