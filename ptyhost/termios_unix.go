//go:build darwin || freebsd || linux

package ptyhost

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// setNodePtyTermios gives the terminal the attributes node-pty gives its
// own (Config.NodePtyTermios): the flag words and control characters its
// spawn sets, at 38400 baud, IUTF8 with utf8. Control characters it does
// not name keep the kernel's values (its zeros would turn FreeBSD's
// VERASE2 into NUL). tty is the slave, blocking and not yet the child's.
func setNodePtyTermios(tty *os.File, utf8 bool) error {
	fd := int(tty.Fd())
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return fmt.Errorf("tcgetattr: %w", err)
	}
	// IXANY: after ^S any key restarts output, not only ^Q.
	t.Iflag = unix.ICRNL | unix.IXON | unix.IXANY | unix.IMAXBEL | unix.BRKINT
	if utf8 {
		t.Iflag |= iflagBits(iutf8)
	}
	t.Oflag = unix.OPOST | unix.ONLCR
	t.Cflag = unix.CREAD | unix.CS8 | unix.HUPCL
	t.Lflag = unix.ICANON | unix.ISIG | unix.IEXTEN | unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHOKE | unix.ECHOCTL
	for _, c := range []struct {
		i int
		v uint8
	}{
		{unix.VEOF, 4}, {unix.VEOL, 0xff}, {unix.VEOL2, 0xff}, {unix.VERASE, 0x7f},
		{unix.VWERASE, 23}, {unix.VKILL, 21}, {unix.VREPRINT, 18}, {unix.VINTR, 3},
		{unix.VQUIT, 0x1c}, {unix.VSUSP, 26}, {unix.VSTART, 17}, {unix.VSTOP, 19},
		{unix.VLNEXT, 22}, {unix.VDISCARD, 15}, {unix.VMIN, 1}, {unix.VTIME, 0},
	} {
		t.Cc[c.i] = c.v
	}
	nodePtyPlatform(t)
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, t); err != nil {
		return fmt.Errorf("tcsetattr: %w", err)
	}
	return nil
}
