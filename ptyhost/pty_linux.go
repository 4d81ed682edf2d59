package ptyhost

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openPTY opens a PTY pair and returns a master that is registered with the
// runtime poller, and the slave in blocking mode for the child.
//
// It talks to the kernel directly, in six system calls: the master opens
// non-blocking and close-on-exec at once, and the slave comes from the
// master itself (TIOCGPTPEER, Linux 4.13), so there is no path to look up
// and no /dev/pts of another mount to open by mistake (its name comes from
// the descriptor, see peerName). Going through
// os.OpenFile twice, as a portable library must, took about twenty calls
// per terminal (poller registrations for the slave, mode switches back
// and forth, a duplicate of the master) on the path of every OPEN.
func openPTY() (master, tty *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	sfd, name, err := openSlave(fd)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	// NewFile sees O_NONBLOCK and registers the master with the poller;
	// the slave stays blocking, as the child expects its terminal.
	return os.NewFile(uintptr(fd), "/dev/ptmx"), os.NewFile(uintptr(sfd), name), nil
}

// openSlave unlocks the slave of master and opens it.
func openSlave(master int) (fd int, name string, err error) {
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return -1, "", fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(master, unix.TIOCGPTN)
	if err != nil {
		return -1, "", fmt.Errorf("pty number: %w", err)
	}
	name = "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno == 0 {
		return int(r), peerName(int(r), name), nil
	}
	// Kernels before 4.13 (EINVAL, ENOTTY): by name.
	fd, err = unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("open %s: %w (TIOCGPTPEER: %v)", name, err, errno)
	}
	return fd, name, nil
}

// peerName names the slave descriptor fd the way /proc shows it. The
// number from TIOCGPTN is the master's index in its own devpts instance,
// and /dev/pts may be another instance (a legacy /dev/ptmx device in a
// container or chroot that mounts its own /dev/pts): the name would then
// be a stranger's PTY, whose holders the session teardown and the
// watchdog would look for. The link in /proc/self/fd is what every
// holder's descriptor of this slave shows too, which is what the holder
// search compares. Without /proc, the number's name is the best there is.
func peerName(fd int, byNumber string) string {
	var buf [64]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n == 0 || n == len(buf) || buf[0] != '/' {
		return byNumber
	}
	return string(buf[:n])
}
