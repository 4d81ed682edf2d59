package main

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nameProcess sets our process name (/proc/PID/comm, what ps, pgrep -x,
// killall and top show) from argv[0]. The kernel takes it from the file
// executed, which is a descriptor number ("15") for the server an upgrade
// executed through /proc/self/fd, and "exe" for a keeper or watchdog
// started through /proc/self/exe.
func nameProcess() {
	name := filepath.Base(os.Args[0])
	if len(name) > 15 { // the kernel's limit, without the NUL
		name = name[:15]
	}
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(name+"\x00"))), 0, 0, 0)
}
