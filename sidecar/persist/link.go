//go:build unix

package persist

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A link is what a conn reads the host's frames from and writes its own
// to: the Unix socket a host (or a bridge that copies) connected on, or
// the host's own pipes, which a bridge handed over (handoff.go). The
// conn's logic (batching, credit, the hung-host handling) is the same on
// both; only these few operations differ.
type link interface {
	io.Reader
	// writeBatch writes every byte of b, with as few system calls as
	// it can (writev), and consumes b.
	writeBatch(b *net.Buffers) error
	// stopReading wakes a Read in progress and makes later ones fail: the
	// read loop ends.
	stopReading()
	// stopWriting makes the write in progress, and every later one, fail
	// at once: the host stopped reading.
	stopWriting()
	Close() error
}

// past is a deadline that has passed: a read or write with it fails at once.
var past = time.Unix(1, 0)

// maxPendingFDs bounds the descriptors a socket peer may have sent before
// a HANDOFF takes them; more are closed as they arrive.
const maxPendingFDs = 8

// sockLink is a connection on the server's socket. The one read where a
// HANDOFF may come (the first after a HELLO that opened the connection:
// a bridge sends HELLO, waits for the answer, then HANDOFF) is a recvmsg,
// so that the descriptors it carries are received (MSG_CMSG_CLOEXEC: the
// programs our terminals start never inherit them) rather than dropped
// by the kernel; they wait in pending until the HANDOFF frame takes them,
// and are closed with the link otherwise. Every other read is a plain
// read(2): the race detector sees those as ordering the writes a test
// made before it wrote to the socket, and a recvmsg not.
type sockLink struct {
	*net.UnixConn
	// recvNext makes the next Read a recvmsg (set by the read loop).
	recvNext bool
	oob      []byte

	mu      sync.Mutex
	pending []int
}

func newSockLink(nc *net.UnixConn) *sockLink {
	return &sockLink{UnixConn: nc}
}

func (l *sockLink) Read(p []byte) (int, error) {
	if !l.recvNext {
		return l.UnixConn.Read(p)
	}
	l.recvNext = false
	if l.oob == nil {
		l.oob = make([]byte, unix.CmsgSpace(4*maxPendingFDs))
	}
	n, oobn, _, _, err := l.ReadMsgUnix(p, l.oob)
	if err != nil {
		// recvmsg's -1 comes back as the count with the error (Read
		// makes it 0): taken as one, it panicked the frame reader when
		// an upgrade ended the read of a host that had sent nothing yet.
		n, oobn = max(n, 0), max(oobn, 0)
	}
	if oobn > 0 {
		l.keepRights(l.oob[:oobn])
	}
	if n == 0 && err == nil {
		// recvmsg(2) says 0 at the end of the stream (ReadMsgUnix does
		// not turn it into EOF as Read does).
		return 0, io.EOF
	}
	return n, err
}

// keepRights adds the descriptors of the control messages in oob to
// pending (closing what is past the bound and what is not a descriptor).
func (l *sockLink) keepRights(oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range msgs {
		fds, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if len(l.pending) < maxPendingFDs {
				l.pending = append(l.pending, fd)
			} else {
				unix.Close(fd)
			}
		}
	}
}

// takeFDs returns the descriptors received so far; they are the
// caller's to close.
func (l *sockLink) takeFDs() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	fds := l.pending
	l.pending = nil
	return fds
}

func (l *sockLink) writeBatch(b *net.Buffers) error {
	_, err := b.WriteTo(l.UnixConn)
	return err
}

func (l *sockLink) stopReading() { l.CloseRead() }
func (l *sockLink) stopWriting() { l.SetWriteDeadline(past) }

func (l *sockLink) Close() error {
	for _, fd := range l.takeFDs() {
		unix.Close(fd)
	}
	return l.UnixConn.Close()
}

// pipeLink is the host's own stdin and stdout, handed over by its bridge:
// pipes, or sockets (sshd gives a session either). Both are in
// non-blocking mode and in the runtime's poller, so that deadlines work
// as on the socket.
type pipeLink struct {
	in, out *os.File
	outRC   syscall.RawConn
	iov     []unix.Iovec // writev's vector, reused (only the conn's writer writes)
}

// newPipeLink makes a link of the descriptors in and out, which it owns
// from now on (closed on failure too).
func newPipeLink(in, out int) (*pipeLink, error) {
	for _, fd := range []int{in, out} {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(in)
			unix.Close(out)
			return nil, fmt.Errorf("descriptor %d: non-blocking mode: %w", fd, err)
		}
	}
	// NewFile sees the non-blocking flag and registers each with the
	// poller.
	l := &pipeLink{in: os.NewFile(uintptr(in), "host-stdin"), out: os.NewFile(uintptr(out), "host-stdout")}
	rc, err := l.out.SyscallConn()
	if err != nil {
		l.Close()
		return nil, err
	}
	l.outRC = rc
	return l, nil
}

func (l *pipeLink) Read(p []byte) (int, error) { return l.in.Read(p) }

// iovMax is how many slices one writev takes (IOV_MAX on Linux and BSD).
const iovMax = 1024

// writeBatch writes b with writev(2): os.File has no vectored write, and
// one write per slice would cost a system call (and a wake-up of the
// host) per frame header.
func (l *pipeLink) writeBatch(b *net.Buffers) error {
	var werr error
	for len(*b) > 0 {
		iov := (*b)[:min(len(*b), iovMax)]
		var n int
		err := l.outRC.Write(func(fd uintptr) bool {
			n, werr = writev(int(fd), iov, &l.iov)
			return werr != unix.EAGAIN
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			if errors.Is(err, unix.EPIPE) {
				return fmt.Errorf("write %s: %w", l.out.Name(), err)
			}
			return err
		}
		consume(b, n)
	}
	return nil
}

// writev is writev(2) of bufs (golang.org/x/sys/unix has it on some
// systems only); iov is reused from call to call.
func writev(fd int, bufs [][]byte, iov *[]unix.Iovec) (int, error) {
	v := (*iov)[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		e := unix.Iovec{Base: &b[0]}
		e.SetLen(len(b))
		v = append(v, e)
	}
	*iov = v
	if len(v) == 0 {
		return 0, nil
	}
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)))
	clear(v) // the buffers are not ours to keep alive
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}

// consume drops the first n bytes of b.
func consume(b *net.Buffers, n int) {
	for len(*b) > 0 {
		if n < len((*b)[0]) {
			(*b)[0] = (*b)[0][n:]
			return
		}
		n -= len((*b)[0])
		*b = (*b)[1:]
	}
}

func (l *pipeLink) stopReading() { l.in.SetReadDeadline(past) }
func (l *pipeLink) stopWriting() { l.out.SetWriteDeadline(past) }

func (l *pipeLink) Close() error {
	err := l.in.Close()
	if err2 := l.out.Close(); err == nil {
		err = err2
	}
	return err
}
