//go:build darwin || freebsd

package session

import "golang.org/x/sys/unix"

// hangupPollEvents: macOS and FreeBSD have no POLLRDHUP; poll(2) there
// reports POLLHUP once the peer has closed both directions, which is all
// watchHangup needs.
const hangupPollEvents = unix.POLLIN

// fionread asks how many bytes wait unread in a socket (pendingBytes):
// FIONREAD, _IOR('f', 127, int) on both, which x/sys/unix does not name.
const fionread = 0x4004667f
