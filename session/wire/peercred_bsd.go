//go:build darwin || freebsd

package wire

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// socketPeerUID reads the peer's credentials the way getpeereid(3) does.
func socketPeerUID(fd int) (uint32, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, fmt.Errorf("LOCAL_PEERCRED: %w", err)
	}
	return cred.Uid, nil
}

// socketPeerPID is 0 here: the xucred that x/sys decodes carries no pid,
// so list shows the pid the daemon registered instead.
func socketPeerPID(fd int) int { return 0 }
