package ptyhost

import "golang.org/x/sys/unix"

// ttyWaitCalls are the system calls a program waiting for its terminal
// sleeps in, with how each names its descriptors (amd64 numbers).
var ttyWaitCalls = map[uint64]waitKind{
	unix.SYS_READ:         waitRead,
	unix.SYS_READV:        waitRead,
	unix.SYS_PREAD64:      waitRead,
	unix.SYS_POLL:         waitPoll,
	unix.SYS_PPOLL:        waitPoll,
	unix.SYS_SELECT:       waitSelect,
	unix.SYS_PSELECT6:     waitSelect,
	unix.SYS_EPOLL_WAIT:   waitEpoll,
	unix.SYS_EPOLL_PWAIT:  waitEpoll,
	unix.SYS_EPOLL_PWAIT2: waitEpoll,
}
