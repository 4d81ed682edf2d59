package persist

import "golang.org/x/sys/unix"

// datasync flushes fd's data (not its timestamps) to the disk.
func datasync(fd int) error { return unix.Fdatasync(fd) }

// writev2 writes a and then b with one system call, so a record's header
// and body reach the file together or, on a full disk, as one short write.
func writev2(fd int, a, b []byte) (int, error) { return unix.Writev(fd, [][]byte{a, b}) }
