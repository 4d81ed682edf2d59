//go:build unix

package wire

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
)

// PeerUID is the user id of the process at the other end of c, as the
// kernel recorded it when the connection was made (the listener's at
// listen time, the client's at connect time). The lookup itself is per
// platform: SO_PEERCRED on Linux, LOCAL_PEERCRED (what getpeereid(3)
// reads) on macOS and FreeBSD.
func PeerUID(c *net.UnixConn) (uint32, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var uid uint32
	var cerr error
	if err := rc.Control(func(fd uintptr) { uid, cerr = socketPeerUID(int(fd)) }); err != nil {
		return 0, err
	}
	return uid, cerr
}

// checkServer refuses a daemon that runs as neither us nor root. Anyone
// may listen on a socket path in a shared directory before the real
// daemon does, or rename their own socket over it; without this check
// `ptyplex output` would print their fake screen and `ptyplex input`
// would type our secrets to them.
func checkServer(c *net.UnixConn, socket string) error {
	uid, err := PeerUID(c)
	if err != nil {
		return fmt.Errorf("cannot tell who serves %s: %w", socket, err)
	}
	me := uint32(os.Geteuid())
	if uid == me || uid == 0 {
		return nil
	}
	return fmt.Errorf("refusing to talk to %s: it is served by %s, not by you (%s) or root; "+
		"someone else may have created a socket at that path", socket, userName(uid), userName(me))
}

// userName is "user alice (uid 1000)", or "uid 1000" for an unknown uid.
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return "user " + u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}

// PeerPID is the pid of the process at the other end of c where the
// platform says (Linux's SO_PEERCRED), else 0.
func PeerPID(c *net.UnixConn) int { return peerPID(c) }
