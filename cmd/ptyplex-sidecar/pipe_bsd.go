//go:build darwin || freebsd

package main

import "os"

// growPipe does nothing on macOS and FreeBSD: their pipes have no settable
// size (they grow to 64 KiB on demand by themselves).
func growPipe(f *os.File) {}
