package ptyhost

import "golang.org/x/sys/unix"

// nodePtyPlatform sets what node-pty's termios has on Linux beyond the
// common part: the speed, which Linux keeps in c_cflag.
func nodePtyPlatform(t *unix.Termios) {
	t.Cflag = t.Cflag&^unix.CBAUD | unix.B38400
}
