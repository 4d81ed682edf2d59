//go:build unix && !linux

package persist

import "golang.org/x/sys/unix"

// datasync flushes fd to the disk. Darwin and the BSDs have no
// fdatasync in x/sys/unix; fsync is the stronger call and does the job.
func datasync(fd int) error { return unix.Fsync(fd) }

// writev2 writes a and then b. x/sys/unix has no writev for every Unix,
// so elsewhere the two go out as one buffer: one write(2) still.
func writev2(fd int, a, b []byte) (int, error) {
	buf := make([]byte, 0, len(a)+len(b))
	buf = append(append(buf, a...), b...)
	return unix.Write(fd, buf)
}

// freeBytes is not told here (Statfs_t differs from one Unix to the
// next): a new store is simply tried.
func freeBytes(string) (int64, bool) { return 0, false }
