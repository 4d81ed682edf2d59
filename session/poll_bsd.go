//go:build darwin || freebsd

package session

import "golang.org/x/sys/unix"

// hangupPollEvents: macOS and FreeBSD have no POLLRDHUP; poll(2) there
// reports POLLHUP once the peer has closed both directions, which is all
// watchHangup needs.
const hangupPollEvents = unix.POLLIN
