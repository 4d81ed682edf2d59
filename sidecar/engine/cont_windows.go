package engine

import "github.com/ptyplex/ptyplex/ptyhost"

// continueGroup does nothing: a console's processes are not stopped by
// signals, and the SIGHUP before it ended the child's whole tree.
func continueGroup(*ptyhost.Process) {}
