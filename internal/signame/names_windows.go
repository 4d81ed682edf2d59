package signame

import "syscall"

// Windows has no signals between processes; the syscall package still
// numbers the classic ones as Unix does, and the SIGNAL frame and kill()
// take these names there (what each does is the ConPTY backend's: see
// docs/platforms.md). The numbers are Linux's, so a name means the same
// number on every platform.
var windowsSignals = []struct {
	name string
	sig  syscall.Signal
}{
	{"SIGHUP", syscall.SIGHUP},
	{"SIGINT", syscall.SIGINT},
	{"SIGQUIT", syscall.SIGQUIT},
	{"SIGILL", syscall.SIGILL},
	{"SIGTRAP", syscall.SIGTRAP},
	{"SIGABRT", syscall.SIGABRT},
	{"SIGBUS", syscall.SIGBUS},
	{"SIGFPE", syscall.SIGFPE},
	{"SIGKILL", syscall.SIGKILL},
	{"SIGSEGV", syscall.SIGSEGV},
	{"SIGPIPE", syscall.SIGPIPE},
	{"SIGALRM", syscall.SIGALRM},
	{"SIGTERM", syscall.SIGTERM},
	// Not in Windows' syscall package; Linux's numbers.
	{"SIGUSR1", 10},
	{"SIGUSR2", 12},
	{"SIGCONT", 18},
	{"SIGSTOP", 19},
	{"SIGTSTP", 20},
	{"SIGWINCH", 28},
	// Windows' own (signal.h, and node's os.constants.signals there):
	// Linux has no SIGBREAK. Taken so that kill('SIGBREAK') from node on
	// Windows is told the backend cannot deliver it (a pseudo-console has
	// no key that raises CTRL_BREAK_EVENT), not that the name is unknown.
	{"SIGBREAK", 21},
}

func signalName(sig syscall.Signal) string {
	for _, s := range windowsSignals {
		if s.sig == sig {
			return s.name
		}
	}
	return ""
}

func signalNum(name string) syscall.Signal {
	for _, s := range windowsSignals {
		if s.name == name {
			return s.sig
		}
	}
	return 0
}
