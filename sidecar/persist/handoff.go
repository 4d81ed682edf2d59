//go:build unix

package persist

import (
	"fmt"
	"io"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// A bridge (`ptyplex-sidecar --persist NAME`, started by a host with its
// stdin and stdout on pipes) would otherwise copy every byte between
// those and the server's socket: one more process, and one more copy and
// wake-up, on every frame. Instead it hands the descriptors themselves
// over: HANDOFF, with the host's stdin and stdout as SCM_RIGHTS, on a
// connection where the server's HELLO answer listed FeatureHandoff. The
// server answers HANDED_OFF and serves the host on those descriptors
// exactly as on a socket (conn, over a pipeLink); the bridge's
// connection stays open only so that each side learns of the other's
// end: the server sends HOST_ENDED, with the status the bridge exits
// with, when it stopped serving the host, and ends the host's connection
// if the bridge goes away (a host that killed its sidecar expects its
// terminals detached).

// handoff takes the host's descriptors c's peer sent with HANDOFF and
// returns the connection that serves them; nil, after telling c why, if
// they cannot be taken (the bridge then copies, as it did before).
func (s *Server) handoff(c *conn) *conn {
	sl, ok := c.l.(*sockLink)
	if !ok {
		c.errorf("", "HANDOFF refused: only a connection to the server's socket can hand descriptors over")
		return nil
	}
	// The descriptors are the host's frame pipes: a process of our user
	// that could open /proc/SERVER/fd/N could read and write the host's
	// frames. The server made itself non-dumpable first thing in main,
	// before it listened (ptyhost.ForbidInspection), so those entries
	// are root's; a server found dumpable (a caller that never made it
	// so, a platform without the flag) refuses rather than expose them.
	fds := sl.takeFDs()
	refuse := func(format string, args ...any) *conn {
		for _, fd := range fds {
			unix.Close(fd)
		}
		msg := fmt.Sprintf(format, args...)
		s.logf("HANDOFF refused: %s", msg)
		c.errorf("", "HANDOFF refused: %s", msg)
		return nil
	}
	if inspectable() {
		return refuse("this server is dumpable: another process of our user could open the host's descriptors through /proc")
	}
	if len(fds) != 2 {
		return refuse("want the host's stdin and stdout as two descriptors, got %d", len(fds))
	}
	for i, want := range []int{unix.O_RDONLY, unix.O_WRONLY} {
		if err := checkHostFD(fds[i], want); err != nil {
			return refuse("%s: %v", []string{"stdin", "stdout"}[i], err)
		}
	}
	pl, err := newPipeLink(fds[0], fds[1])
	if err != nil {
		fds = nil // newPipeLink closed them
		return refuse("%v", err)
	}
	host := newConn(s, pl, c.peer)
	host.readopt = c.readopt // the bridge's HELLO asked for its host
	host.env = c.env         // and said what its host would have given a plain sidecar
	host.cwd = c.cwd
	if !s.addConn(host) {
		pl.Close()
		c.errorf("", "HANDOFF refused: the server is stopping or upgrading")
		return nil
	}
	c.writeJSON(proto.TypeHandedOff, struct{}{})
	s.logf("serving a host on the stdin and stdout its bridge (pid %d) handed over", wire.PeerPID(c.peer))
	return host
}

// checkHostFD accepts a pipe or a socket open for the access mode want
// (or both ways). Anything else, a terminal or a file, is refused: the
// server puts the descriptors in non-blocking mode, a flag of the open
// file that a terminal shares with the user's shell.
func checkHostFD(fd, want int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return fmt.Errorf("not a pipe or a socket (mode %#o)", t)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if acc := fl & unix.O_ACCMODE; acc != want && acc != unix.O_RDWR {
		return fmt.Errorf("not open for %s", map[int]string{unix.O_RDONLY: "reading", unix.O_WRONLY: "writing"}[want])
	}
	return nil
}

// hostEndedBound is how long the server waits to tell a bridge that its
// host's connection ended: a bridge that does not read is gone or stuck.
const hostEndedBound = 2 * time.Second

// serveHandedOff serves host, the descriptors bridge handed over, to
// their end, then tells the bridge how it ended and hangs up.
func (s *Server) serveHandedOff(bridge, host *conn) {
	// The bridge sends nothing more; its end (it was killed, or its host
	// ended it) ends the host's connection, as a bridge that copies
	// ends it by closing the socket.
	go func() {
		io.Copy(io.Discard, bridge.peer)
		host.abort("the bridge ended")
	}()
	_, code, why := s.readFrames(host)
	s.endConn(host)
	// Closing our copies closes the host's stdout (the bridge closed
	// its own): the host reads the end of our frames there.
	host.l.Close()
	if code != 0 {
		s.logf("host connection ended: %s", why)
	}
	bridge.peer.SetWriteDeadline(time.Now().Add(hostEndedBound))
	bridge.writeJSON(proto.TypeHostEnded, proto.HostEnded{Code: code, Reason: why})
	bridge.l.Close()
}
