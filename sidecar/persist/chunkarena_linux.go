package persist

import "golang.org/x/sys/unix"

// adviseHuge asks for transparent huge pages for b (best effort: with
// them off, or "never", b gets small pages as before).
func adviseHuge(b []byte) { unix.Madvise(b, unix.MADV_HUGEPAGE) }
