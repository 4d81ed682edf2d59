//go:build darwin || freebsd

package main

import (
	"io"
	"net"
	"os"
)

// growPipe does nothing on macOS and FreeBSD: their pipes have no settable
// size (they grow to 64 KiB on demand by themselves).
func growPipe(f *os.File) {}

// copyToHost moves the server's frames to the host. Without splice,
// io.Copy would go through 32 KiB at a time (os.File.ReadFrom's generic
// copy): a read and a write for every half frame of a flood. A 256 KiB
// buffer takes what the socket holds in one read. The wrappers hide
// ReadFrom and WriteTo so that io.CopyBuffer uses the buffer.
func copyToHost(dst *os.File, src *net.UnixConn) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 256<<10))
}
