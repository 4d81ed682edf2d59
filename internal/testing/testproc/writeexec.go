package testproc

import (
	"os"
	"syscall"
)

// WriteExecutable writes data to the file at path (created or truncated)
// with mode perm, for tests that then execute it. A descriptor open for
// writing is inherited by every child this process forks meanwhile, and
// stays open in that child until its exec: an exec of the file in that
// window fails with "text file busy" (ETXTBSY). Forks take syscall.ForkLock
// for writing; holding it for reading while the file is open keeps them
// out of the window.
func WriteExecutable(path string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := os.WriteFile(path, data, perm); err != nil {
		return err
	}
	return os.Chmod(path, perm) // WriteFile's mode is cut by the umask
}

// CopyExecutable copies the file at src to dst as WriteExecutable writes.
func CopyExecutable(src, dst string, perm os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return WriteExecutable(dst, b, perm)
}
