//go:build unix

package engine

import (
	"syscall"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// continueGroup wakes the stopped processes of the child's process group.
func continueGroup(p *ptyhost.Process) { p.SignalGroup(syscall.SIGCONT) }
