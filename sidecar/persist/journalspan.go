//go:build unix

package persist

// What the reader needs of a journal beyond journal.go: a read that
// spans the end of one chunk and the start of the next, and giving the
// chunks back when the terminal is gone.
//
// Why a span: a PTY read returns what the child wrote so far, often
// 50-60 KiB at a time while it floods; read into the rest of a 64 KiB
// chunk only, every other read was cut short at the chunk's end, and the
// server read, framed and wrote twice as often as the plain sidecar for
// the same bytes (frames of 30 KiB on average against 55).

// reserveSpan is reserve that may go on into the next chunk: a is the
// free region after the newest byte (as reserve returns it), b, when a
// is shorter than want only because its chunk ends, the start of the
// chunk that follows (the journal's spare, taken now, added to the
// journal by commitSpan only if the read reaches it). Both nil when the
// journal is full.
func (j *journal) reserveSpan(want int) (a, b []byte) {
	if j.spare != nil && j.size < j.limit && (len(j.chunks) == 0 || j.tail == len(j.chunks[len(j.chunks)-1])) {
		// The last chunk is full: the spare is the next one.
		j.chunks = append(j.chunks, j.spare[:])
		j.spare, j.tail = nil, 0
	}
	a = j.reserve(want)
	if a == nil && j.spare != nil {
		// Full: the reader evicts or waits, maybe for long (a
		// detached ring, a parked journal); the spare is not kept
		// meanwhile beside a full journal's chunks.
		chunkPool.Put(j.spare)
		j.spare = nil
	}
	if a == nil || len(a) >= want {
		return a, nil
	}
	last := j.chunks[len(j.chunks)-1]
	room := j.limit - j.size - len(a)
	if len(last) != journalChunk || j.tail+len(a) != len(last) || room <= 0 {
		// Cut by the journal's limit, or a small chunk (an idle
		// terminal's first, or a journal smaller than a chunk): no span.
		return a, nil
	}
	if j.spare == nil {
		j.spare = chunkPool.Get().(*[journalChunk]byte)
	}
	return a, j.spare[:min(want-len(a), room)]
}

// commitSpan records n bytes read into the regions reserveSpan returned,
// of which the first was na bytes long.
func (j *journal) commitSpan(n, na int) {
	if n <= na {
		j.commit(n)
		return
	}
	j.commit(na)
	j.chunks = append(j.chunks, j.spare[:])
	j.spare, j.tail = nil, 0
	j.commit(n - na)
}

// free gives every chunk back (to chunkPool, which another journal
// takes them from): the journal holds nothing after it and must not be
// read again. Its terminal is gone, and nothing reads its bytes any
// more: neither its reader (ended) nor its pump (ending).
func (j *journal) free() {
	j.evict(j.size)
	for _, c := range j.chunks {
		j.release(c)
	}
	j.chunks, j.head, j.tail = nil, 0, 0
	if j.spare != nil {
		chunkPool.Put(j.spare)
		j.spare = nil
	}
}

// compact moves the bytes kept to storage of their size, if that takes
// less than what holds them now (a 4 KiB first chunk with a prompt in
// it, a 64 KiB one with a few lines): for a journal that no longer
// grows, a finished terminal's. The chunks it held go back (to
// chunkPool, or to the loans that hold them).
func (j *journal) compact() {
	if j.spare != nil {
		chunkPool.Put(j.spare)
		j.spare = nil
	}
	if len(j.lent) == 0 {
		j.lent = nil
	}
	if j.size > journalChunk || j.allocated()-j.size < 256 {
		return
	}
	var b []byte
	if j.size > 0 {
		b = make([]byte, j.size)
		j.copyOut(b, j.start)
	}
	for _, c := range j.chunks {
		j.release(c)
	}
	j.chunks, j.head, j.tail = nil, 0, 0
	if b != nil {
		j.chunks, j.tail = [][]byte{b}, len(b)
	}
}
