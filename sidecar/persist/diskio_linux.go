package persist

import "golang.org/x/sys/unix"

// datasync flushes fd's data (not its timestamps) to the disk.
func datasync(fd int) error { return unix.Fdatasync(fd) }

// writev2 writes a and then b with one system call, so a record's header
// and body reach the file together or, on a full disk, as one short write.
func writev2(fd int, a, b []byte) (int, error) { return unix.Writev(fd, [][]byte{a, b}) }

// freeBytes is how much the file system that holds path lets an
// unprivileged user write, or ok false if that cannot be told.
func freeBytes(path string) (n int64, ok bool) {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}
