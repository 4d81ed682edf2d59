//go:build unix

package persist

import (
	"bytes"
	"errors"
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

// execCandidate executes the bytes openCandidate verified, and nothing
// else. It copies them into a sealed memfd and runs that: the verified
// descriptor alone (/proc/self/fd/N, which is what fexecve does) would
// not do, because execve opens the file again, and by then a program
// with write access to it may have written over it in place, or, on a
// filesystem whose server tracks open files by path (9p, some FUSE
// mounts), renamed another file to its path. The new image's
// /proc/self/exe is then that memfd; its argv[0] names the binary. Where
// the kernel will not execute a memfd (vm.memfd_noexec=2) it falls back
// to execDescriptor. It returns only on failure.
func execCandidate(c *candidate, args []string) error {
	fd, err := c.descriptor()
	if err != nil {
		return err
	}
	image, err := sealedImage(c.image)
	if err == nil {
		err = syscall.Exec(fmt.Sprintf("/proc/self/fd/%d", image.Fd()), args, os.Environ())
		image.Close()
		err = fmt.Errorf("execute it: %w", err)
	}
	if derr := execDescriptor(c, fd, args); derr != nil {
		return fmt.Errorf("a sealed copy of %s: %v; %w", c.Name(), err, derr)
	}
	return nil
}

// execDescriptor executes the verified descriptor fd of c if opening it
// again, as execve will, still gives the bytes that were verified. What
// can change between that check and the exec is not covered here.
func execDescriptor(c *candidate, fd int, args []string) error {
	path := fmt.Sprintf("/proc/self/fd/%d", fd)
	now, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the verified %s again: %w", c.Name(), err)
	}
	if !bytes.Equal(now, c.image) {
		return fmt.Errorf("%s changed since it was checked", c.Name())
	}
	return syscall.Exec(path, args, os.Environ())
}

// sealedImage returns a read-only descriptor of a memfd holding image,
// sealed so that no descriptor of it can change it. The writable
// descriptor is closed before it returns: execve refuses a file that is
// open for writing (ETXTBSY).
func sealedImage(image []byte) (*os.File, error) {
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate("ptyplex-sidecar", flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3, which has no MFD_EXEC
		fd, err = unix.MemfdCreate("ptyplex-sidecar", flags)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	w := os.NewFile(uintptr(fd), "memfd:ptyplex-sidecar")
	defer w.Close()
	if _, err := w.Write(image); err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	if err := unix.Fchmod(fd, 0o500); err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	const seals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return nil, fmt.Errorf("memfd: seal: %w", err)
	}
	r, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("memfd: reopen read-only: %w", err)
	}
	return os.NewFile(uintptr(r), "memfd:ptyplex-sidecar"), nil
}

// runnable is a path that runs the verified bytes in a child (tryFlags):
// a sealed copy, or where the kernel will not execute a memfd, the
// verified descriptor. done releases it.
func (c *candidate) runnable() (path string, done func(), err error) {
	if image, err := sealedImage(c.image); err == nil {
		return fmt.Sprintf("/proc/self/fd/%d", image.Fd()), func() { image.Close() }, nil
	}
	fd, err := c.descriptor()
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d", fd), func() {}, nil
}
