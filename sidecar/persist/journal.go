package persist

import "io"

// journal keeps the newest bytes a terminal produced, addressed by their
// offset since OPEN. It is a ring that starts small and doubles up to its
// capacity, so an idle terminal costs a few KiB however large its journal
// may grow. It is not safe for concurrent use: the terminal's mutex guards
// it, except that the region handed out by reserve is filled by the reader
// without the lock (no one else touches bytes past end).
type journal struct {
	buf   []byte // ring storage; len(buf) is the current allocation
	limit int    // the most bytes kept
	head  int    // index in buf of the byte at offset start
	size  int    // bytes kept: end - start
	start uint64 // offset of the oldest byte kept; also how many fell out
	end   uint64 // bytes produced so far
}

// journalInitial is the first allocation: enough for a prompt and a few
// screens of an idle shell.
const journalInitial = 4 << 10

func newJournal(limit int) *journal {
	return &journal{limit: max(limit, 1)}
}

// room returns how many more bytes fit before something has to fall out.
func (j *journal) room() int { return j.limit - j.size }

// evict drops the n oldest bytes (n <= size).
func (j *journal) evict(n int) {
	if n <= 0 {
		return
	}
	j.head = (j.head + n) % len(j.buf)
	j.size -= n
	j.start += uint64(n)
	if j.size == 0 {
		j.head = 0
	}
}

// reserve returns a contiguous free region of at most want bytes at the
// end of the ring, growing the allocation first if it is full and below
// the limit; nil when the journal is full (the caller evicts or waits).
func (j *journal) reserve(want int) []byte {
	if j.size == len(j.buf) && len(j.buf) < j.limit {
		j.grow()
	}
	if j.size == len(j.buf) {
		return nil
	}
	w := (j.head + j.size) % len(j.buf)
	n := len(j.buf) - j.size // free bytes in all
	if w+n > len(j.buf) {
		n = len(j.buf) - w // only up to the end of the storage
	}
	return j.buf[w : w+min(n, want)]
}

// commit records n bytes written into the region reserve returned.
func (j *journal) commit(n int) {
	j.size += n
	j.end += uint64(n)
}

// grow doubles the allocation (up to limit), laying the bytes out from 0.
func (j *journal) grow() {
	n := min(max(2*len(j.buf), journalInitial), j.limit)
	nb := make([]byte, n)
	j.copyOut(nb, j.start)
	j.buf, j.head = nb, 0
}

// append writes p, evicting the oldest bytes as needed; it is the whole
// story for callers that do not read straight into the ring (tests,
// output produced by the server itself).
func (j *journal) append(p []byte) {
	for len(p) > 0 {
		r := j.reserve(len(p))
		if r == nil {
			j.evict(min(len(p), j.size))
			continue
		}
		n := copy(r, p)
		j.commit(n)
		p = p[n:]
	}
}

// copyOut copies the bytes from offset off onwards into dst and returns
// how many it copied. off must lie in [start, end].
func (j *journal) copyOut(dst []byte, off uint64) int {
	if off < j.start || off > j.end {
		return 0
	}
	skip := int(off - j.start)
	n := min(len(dst), j.size-skip)
	if n <= 0 {
		return 0
	}
	i := (j.head + skip) % len(j.buf)
	c := copy(dst[:n], j.buf[i:])
	if c < n {
		copy(dst[c:n], j.buf[:n-c])
	}
	return n
}

// writeTo writes everything kept to w, oldest first, without a copy.
func (j *journal) writeTo(w io.Writer) error {
	if j.size == 0 {
		return nil
	}
	first := min(j.size, len(j.buf)-j.head)
	if _, err := w.Write(j.buf[j.head : j.head+first]); err != nil {
		return err
	}
	_, err := w.Write(j.buf[:j.size-first])
	return err
}

// bytes returns a copy of everything kept (for a snapshot).
func (j *journal) bytes() []byte {
	b := make([]byte, j.size)
	j.copyOut(b, j.start)
	return b
}
