// Package proto is the frame codec of the ptyplex sidecar protocol.
//
// A frame on the wire is a little-endian uint32 length, a one-byte type and
// a body: [u32 total][u8 type][body], where total counts the type byte plus
// the body and lies in 1..MaxFrame. INPUT and OUTPUT bodies are data frames
// ([u16 id length][id][raw bytes]); every other body is a compact JSON
// object with camelCase keys.
//
// The package knows nothing about PTYs or processes. A decoding error means
// the stream is corrupt: the protocol has no way to resynchronise, so callers
// stop reading and tear down.
package proto
