// Package soak holds ptyplex's soak and fault tests: thousands of
// OPEN/CLOSE cycles, a host that stops reading, byte-exact integrity of
// large streams, a sidecar killed with SIGKILL, and a session daemon under
// hostile clients. They drive the real binaries the way hosts and clients
// do.
//
// `go test ./soak/` runs a short version of each (part of `make test`);
// `go test ./soak/ -soak` (make soak) runs them at full size.
package soak
