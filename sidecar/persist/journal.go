//go:build unix

package persist

import (
	"bytes"
	"io"
)

// journal keeps the newest bytes a terminal produced, addressed by their
// offset since OPEN. It is a queue of fixed-size chunks: bytes are
// appended to the last chunk, a new one is taken when it is full, and a
// chunk whose bytes have all fallen out goes back to a pool shared by
// every journal. So growing never copies, nothing is left behind for the
// collector when a journal fills, and the storage stays within two
// chunks of the bytes kept, however large the journal may grow. An idle
// terminal costs one small first chunk.
//
// It is not safe for concurrent use: the terminal's mutex guards it,
// except that the region handed out by reserve is filled by the reader
// without the lock (no one else touches bytes past end, and only the
// reader evicts, so the chunk it reads into stays in the journal).
type journal struct {
	// spare is the chunk a read spanning the end of the last one reads
	// on into (journalspan.go), until a read reaches it; nil otherwise.
	spare *[journalChunk]byte
	// chunks holds the bytes kept, oldest first: from chunks[0][head] to
	// the last chunk's [tail]. Every chunk but the last is full. Only
	// chunks[0] may differ in size from the rest (the small first chunk).
	chunks [][]byte
	limit  int    // the most bytes kept
	head   int    // index in chunks[0] of the byte at offset start
	tail   int    // bytes used in the last chunk
	size   int    // bytes kept: end - start
	start  uint64 // offset of the oldest byte kept; also how many fell out
	end    uint64 // bytes produced so far
	grown  bool   // a full-size chunk was taken: no more small ones
	// lent holds the chunks viewers are writing from without the lock
	// (viewers.go): one that falls out meanwhile is reused only once
	// the last of them has given it back.
	lent map[*byte]*loan
}

const (
	// journalInitial is the first chunk: enough for a prompt and a few
	// screens of an idle shell, so that a thousand idle terminals cost a
	// few MiB.
	journalInitial = 4 << 10
	// journalChunk is the size of every later chunk: a PTY read is
	// rarely larger, and a chunk's worth more than the bytes kept is
	// what a journal may hold in storage at either end.
	journalChunk = 64 << 10
)

// chunkPool recycles full-size chunks between journals: a flooding
// terminal's evicted chunk is the next one it (or another) fills, so a
// full ring costs neither page faults nor zeroing. They live outside the
// Go heap (chunkarena.go).
var chunkPool = newChunkArena()

func newJournal(limit int) *journal {
	return &journal{limit: max(limit, 1)}
}

// room returns how many more bytes fit before something has to fall out.
func (j *journal) room() int { return j.limit - j.size }

// chunkSize is the size of the chunks after the first.
func (j *journal) chunkSize() int { return min(journalChunk, j.limit) }

// newChunk takes the storage for the next chunk.
func (j *journal) newChunk() []byte {
	if !j.grown && len(j.chunks) == 0 {
		n := min(journalInitial, j.limit)
		if n < j.chunkSize() {
			return make([]byte, n)
		}
	}
	j.grown = true
	if n := j.chunkSize(); n < journalChunk {
		return make([]byte, n) // a journal smaller than a chunk
	}
	return chunkPool.Get().(*[journalChunk]byte)[:]
}

// release gives a chunk no byte of the journal is in back.
func (j *journal) release(c []byte) {
	if j.keptForLoan(c) {
		return
	}
	if len(c) == journalChunk {
		chunkPool.Put((*[journalChunk]byte)(c))
	}
}

// evict drops the n oldest bytes (n <= size), releasing the chunks they
// emptied.
func (j *journal) evict(n int) {
	if n <= 0 {
		return
	}
	j.head += n
	j.size -= n
	j.start += uint64(n)
	for len(j.chunks) > 0 && j.head >= len(j.chunks[0]) {
		if len(j.chunks) == 1 {
			// The last chunk, all of it read and evicted: the next
			// reserve takes a new one.
			j.tail = 0
		}
		j.head -= len(j.chunks[0])
		j.release(j.chunks[0])
		j.chunks[0] = nil
		j.chunks = j.chunks[1:]
	}
	if len(j.chunks) == 0 {
		j.chunks = nil // let the slice's backing array go
		j.head = 0
	}
}

// oldestRun is how many bytes are kept in the oldest chunk: evicting
// them gives the chunk back. 0 when the oldest chunk is also the one
// being filled (evicting all of it frees nothing).
func (j *journal) oldestRun() int {
	if len(j.chunks) < 2 {
		return 0
	}
	return len(j.chunks[0]) - j.head
}

// reserve returns a contiguous free region of at most want bytes after
// the newest byte, taking a new chunk if the last one is full; nil when
// the journal holds limit bytes (the caller evicts or waits). A region
// never spans two chunks.
func (j *journal) reserve(want int) []byte {
	if j.size >= j.limit || want <= 0 {
		return nil
	}
	if len(j.chunks) == 0 || j.tail == len(j.chunks[len(j.chunks)-1]) {
		j.chunks = append(j.chunks, j.newChunk())
		j.tail = 0
	}
	last := j.chunks[len(j.chunks)-1]
	n := min(want, j.limit-j.size, len(last)-j.tail)
	return last[j.tail : j.tail+n]
}

// commit records n bytes written into the region reserve returned.
func (j *journal) commit(n int) {
	j.tail += n
	j.size += n
	j.end += uint64(n)
}

// append writes p, evicting the oldest bytes as needed; it is the whole
// story for callers that do not read straight into the journal (tests,
// a journal handed over by a live upgrade).
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

// locate returns the chunk and the index in it of the byte at offset
// off (start <= off < end).
func (j *journal) locate(off uint64) (ci, i int) {
	skip := j.head + int(off-j.start)
	if first := len(j.chunks[0]); skip < first {
		return 0, skip
	} else {
		skip -= first
	}
	cs := j.chunkSize()
	return 1 + skip/cs, skip % cs
}

// copyOut copies the bytes from offset off onwards into dst and returns
// how many it copied. off must lie in [start, end].
func (j *journal) copyOut(dst []byte, off uint64) int {
	if off < j.start || off >= j.end {
		return 0
	}
	n := min(len(dst), int(j.end-off))
	ci, i := j.locate(off)
	for c := 0; c < n; ci, i = ci+1, 0 {
		c += copy(dst[c:n], j.chunks[ci][i:])
	}
	return n
}

// appendSlices appends to dst the journal's own storage of the n bytes
// from offset off on (start <= off, off+n <= end), one slice per chunk
// they are in. The slices are valid until those bytes are evicted.
func (j *journal) appendSlices(dst [][]byte, off uint64, n int) [][]byte {
	if n <= 0 {
		return dst
	}
	ci, i := j.locate(off)
	for ; n > 0; ci, i = ci+1, 0 {
		b := j.chunks[ci][i:min(len(j.chunks[ci]), i+n)]
		dst = append(dst, b)
		n -= len(b)
	}
	return dst
}

// writeTo writes everything kept to w, oldest first, without a copy.
func (j *journal) writeTo(w io.Writer) error {
	left := j.size
	for ci, i := 0, j.head; left > 0; ci, i = ci+1, 0 {
		b := j.chunks[ci][i:min(len(j.chunks[ci]), i+left)]
		if _, err := w.Write(b); err != nil {
			return err
		}
		left -= len(b)
	}
	return nil
}

// bytes returns a copy of everything kept (for a snapshot).
func (j *journal) bytes() []byte { return j.copyFrom(j.start) }

// allocated is the storage the journal holds, in bytes.
func (j *journal) allocated() int {
	n := 0
	for _, c := range j.chunks {
		n += len(c)
	}
	return n
}

// tailStart is the offset from which the kept bytes hold at most lines
// newlines, and at most maxBytes bytes: the tail a screen with that many
// lines (screen and scrollback) can still show something of. Bytes
// before it only ever scroll out of such a screen.
func (j *journal) tailStart(lines, maxBytes int) uint64 {
	lo := j.start
	if j.size > maxBytes {
		lo = j.end - uint64(maxBytes)
	}
	off := j.end
	for ci := len(j.chunks) - 1; ci >= 0 && off > lo; ci-- {
		c := j.chunks[ci]
		from, to := 0, len(c)
		if ci == len(j.chunks)-1 {
			to = j.tail
		}
		if ci == 0 {
			from = j.head
		}
		// The chunk holds [off-(to-from), off).
		base := off - uint64(to-from)
		if base < lo {
			from += int(lo - base)
			base = lo
		}
		seg := c[from:to]
		for len(seg) > 0 {
			i := bytes.LastIndexByte(seg, '\n')
			if i < 0 {
				break
			}
			if lines--; lines < 0 {
				return base + uint64(i) + 1
			}
			seg = seg[:i]
		}
		off = base
	}
	return lo
}

// copyFrom returns a copy of the bytes kept from offset off on.
func (j *journal) copyFrom(off uint64) []byte {
	off = max(off, j.start)
	b := make([]byte, j.end-off)
	j.copyOut(b, off)
	return b
}
