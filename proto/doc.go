// Package proto is the frame codec of the ptyplex sidecar protocol.
//
// A frame on the wire is a little-endian uint32 length, a one-byte type and
// a body: [u32 total][u8 type][body], where total counts the type byte plus
// the body and lies in 1..MaxFrame. INPUT and OUTPUT bodies are data frames
// ([u16 id length][id][raw bytes]); every other body is a compact JSON
// object with camelCase keys.
//
// The package knows nothing about PTYs or processes. A framing error means
// the stream is corrupt: the protocol has no way to resynchronise, so callers
// stop reading and tear down. A well-framed body that is malformed is only
// that frame's fault: Decode turns a host frame into its typed message
// (Msg), or into a *DecodeError naming the frame type and the terminal id
// the body named, and each server decides from those whether to answer
// with an ERROR, log or drop; both servers' dispatch is a type switch over
// Decode's messages, so a frame is parsed in one place only.
package proto
