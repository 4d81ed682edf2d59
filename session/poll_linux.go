//go:build unix

package session

import "golang.org/x/sys/unix"

// hangupPollEvents makes poll(2) report a peer's shutdown of its sending
// side (POLLRDHUP) apart from a full close (POLLHUP); see watchHangup.
const hangupPollEvents = unix.POLLIN | unix.POLLRDHUP

// fionread asks how many bytes wait unread in a socket (pendingBytes).
const fionread = unix.TIOCINQ
