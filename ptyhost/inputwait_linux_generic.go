//go:build linux && !amd64

package ptyhost

import "golang.org/x/sys/unix"

// ttyWaitCalls for the architectures of the generic system call table
// (arm64, riscv64, ...), which have only the p-variants of poll and select
// and epoll_pwait.
var ttyWaitCalls = map[uint64]waitKind{
	unix.SYS_READ:         waitRead,
	unix.SYS_READV:        waitRead,
	unix.SYS_PREAD64:      waitRead,
	unix.SYS_PPOLL:        waitPoll,
	unix.SYS_PSELECT6:     waitSelect,
	unix.SYS_EPOLL_PWAIT:  waitEpoll,
	unix.SYS_EPOLL_PWAIT2: waitEpoll,
}
