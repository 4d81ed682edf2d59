//go:build unix

package persist

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// stateFile is where the handover state goes: an anonymous file in
// memory, which leaves nothing behind whatever happens to us.
func stateFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("ptyplex-persist-state", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "memfd:ptyplex-persist-state"), nil
}

// selfExe opens the binary we run, so that the new image can go back to
// it if it cannot take the state over (even if the path was replaced
// meanwhile); nil if it cannot be opened.
func selfExe() *os.File {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil
	}
	return f
}

// ExecPrevious executes the binary open at exeFD (see selfExe) with args,
// which is what execveat(exeFD, "", ..., AT_EMPTY_PATH) does: fexecve
// goes through /proc/self/fd too, and syscall.Exec keeps the runtime's
// guard against a fork at the same moment, which a raw execveat would
// not. It returns only on failure.
func ExecPrevious(exeFD int, args []string) error {
	path := fmt.Sprintf("/proc/self/fd/%d", exeFD)
	return syscall.Exec(path, args, os.Environ())
}

// execCandidate executes the very file openCandidate verified, through
// /proc/self/fd (what fexecve does): a file put at its path since then is
// not what runs. The descriptor is close-on-exec, which the kernel
// honours only once it has the new image. It returns only on failure.
func execCandidate(f *os.File, args []string) error {
	fd, err := fileFD(f)
	if err != nil {
		return err
	}
	return syscall.Exec(fmt.Sprintf("/proc/self/fd/%d", fd), args, os.Environ())
}
