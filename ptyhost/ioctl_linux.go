package ptyhost

import "golang.org/x/sys/unix"

// ioctlGetTermios is tcgetattr's ioctl.
const ioctlGetTermios = unix.TCGETS
