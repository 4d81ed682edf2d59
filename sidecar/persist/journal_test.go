//go:build unix

package persist

import (
	"bytes"
	"fmt"
	"testing"
)

// numbered returns n bytes of numbered lines starting at line from.
func numbered(from, n int) []byte {
	var b bytes.Buffer
	for i := from; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%08d\n", i)
	}
	return b.Bytes()[:n]
}

func TestJournalWraparound(t *testing.T) {
	j := newJournal(10000)
	all := numbered(0, 95000)
	for p := all; len(p) > 0; {
		n := min(len(p), 777) // not a divisor of the limit: every wrap lands elsewhere
		j.append(p[:n])
		p = p[n:]
		if j.size > j.limit || j.allocated() > j.limit+2*j.chunkSize() {
			t.Fatalf("journal holds %d bytes in %d of storage, over its limit %d", j.size, j.allocated(), j.limit)
		}
	}
	if j.end != uint64(len(all)) {
		t.Fatalf("end = %d, want %d", j.end, len(all))
	}
	if j.start != uint64(len(all)-10000) {
		t.Fatalf("start = %d (bytes lost), want %d", j.start, len(all)-10000)
	}
	if got, want := j.bytes(), all[len(all)-10000:]; !bytes.Equal(got, want) {
		t.Fatalf("journal keeps the wrong bytes:\n got %q...\nwant %q...", got[:40], want[:40])
	}
	// Reading from every offset in the range returns exactly the tail.
	for _, off := range []uint64{j.start, j.start + 1, j.start + 4999, j.end - 1, j.end} {
		dst := make([]byte, 20000)
		n := j.copyOut(dst, off)
		if !bytes.Equal(dst[:n], all[off:]) {
			t.Fatalf("copyOut(%d) = %d bytes, not the journal's tail", off, n)
		}
	}
	if n := j.copyOut(make([]byte, 10), j.start-1); n != 0 {
		t.Fatalf("copyOut below start copied %d bytes", n)
	}
	if n := j.copyOut(make([]byte, 10), j.end+1); n != 0 {
		t.Fatalf("copyOut past end copied %d bytes", n)
	}
}

func TestJournalGrowsLazily(t *testing.T) {
	j := newJournal(4 << 20)
	j.append([]byte("$ "))
	if n := j.allocated(); n > journalInitial {
		t.Fatalf("an idle terminal's journal allocated %d bytes", n)
	}
	j.append(numbered(0, 100000))
	// Lazily: the small first chunk and just enough full ones.
	if n := j.allocated(); n < 100002 || n > journalInitial+100002+journalChunk {
		t.Fatalf("allocation %d after 100002 bytes", n)
	}
	if j.start != 0 {
		t.Fatalf("%d bytes lost below the limit", j.start)
	}
	want := append([]byte("$ "), numbered(0, 100000)...)
	if !bytes.Equal(j.bytes(), want) {
		t.Fatal("bytes changed while the journal grew")
	}
}

// TestJournalReserveFull checks the contract a park-mode reader relies
// on: a full journal at its limit hands out no room until bytes are
// evicted, and the room it then gives is exactly what was evicted.
func TestJournalReserveFull(t *testing.T) {
	j := newJournal(8192)
	j.append(numbered(0, 8192))
	if r := j.reserve(100); r != nil {
		t.Fatalf("full journal reserved %d bytes", len(r))
	}
	j.evict(300)
	r := j.reserve(1000)
	if len(r) != 300 {
		t.Fatalf("reserved %d bytes after evicting 300", len(r))
	}
	copy(r, "x")
	j.commit(1)
	if j.start != 300 || j.end != 8193 || j.size != 7893 {
		t.Fatalf("start %d end %d size %d", j.start, j.end, j.size)
	}
}

// TestJournalChunks drives a journal several chunks large the way the
// reader does (reserve, fill, commit, evict when full) with reads that
// straddle chunk boundaries, and checks at every step that the bytes, the
// offsets and the storage are what they should be.
func TestJournalChunks(t *testing.T) {
	const limit = 5*journalChunk + 12345 // not a multiple of the chunk
	j := newJournal(limit)
	all := numbered(0, 40*journalChunk+777)
	step := 0
	for p := all; len(p) > 0; step++ {
		want := []int{1, 4095, 65000, 70000, 13}[step%5]
		r := j.reserve(want)
		if r == nil {
			// Full: evict a step that is not chunk-aligned either.
			if j.size != limit {
				t.Fatalf("reserve refused with %d of %d bytes kept", j.size, limit)
			}
			j.evict(min(j.size, 3*journalChunk/2+1))
			continue
		}
		if len(r) > want || len(r) > j.chunkSize() {
			t.Fatalf("reserve(%d) gave %d bytes", want, len(r))
		}
		n := copy(r, p)
		j.commit(n)
		p = p[n:]
		if j.allocated() > j.size+2*journalChunk {
			t.Fatalf("%d bytes kept in %d of storage (%d chunks)", j.size, j.allocated(), len(j.chunks))
		}
	}
	if j.end != uint64(len(all)) || j.end-j.start != uint64(j.size) || j.size > limit {
		t.Fatalf("start %d end %d size %d", j.start, j.end, j.size)
	}
	if !bytes.Equal(j.bytes(), all[j.start:]) {
		t.Fatal("the journal keeps the wrong bytes")
	}
	var w bytes.Buffer
	if err := j.writeTo(&w); err != nil || !bytes.Equal(w.Bytes(), all[j.start:]) {
		t.Fatalf("writeTo wrote %d bytes (%v), not the journal", w.Len(), err)
	}
	// copyOut from offsets around every chunk boundary, into buffers
	// smaller and larger than a chunk.
	for ci := 0; ci <= len(j.chunks); ci++ {
		var boundary uint64
		if ci == 0 {
			boundary = j.start
		} else {
			boundary = j.start - uint64(j.head) + uint64(len(j.chunks[0])+(ci-1)*j.chunkSize())
		}
		for _, d := range []int64{-2, -1, 0, 1} {
			off := uint64(int64(boundary) + d)
			if off < j.start || off > j.end {
				continue
			}
			for _, size := range []int{1, 3, journalChunk + 5, limit} {
				dst := make([]byte, size)
				n := j.copyOut(dst, off)
				if want := min(size, int(j.end-off)); n != want || !bytes.Equal(dst[:n], all[off:off+uint64(n)]) {
					t.Fatalf("copyOut(%d bytes at %d) = %d bytes, want %d of the journal", size, off, n, want)
				}
			}
		}
	}
	// Evicting everything releases every chunk but possibly the last,
	// and the journal goes on at the same offsets.
	end := j.end
	j.evict(j.size)
	if j.size != 0 || j.start != end || j.allocated() > journalChunk {
		t.Fatalf("after evicting all: size %d start %d storage %d", j.size, j.start, j.allocated())
	}
	j.append([]byte("more"))
	if got := j.bytes(); string(got) != "more" || j.start != end || j.end != end+4 {
		t.Fatalf("after evicting all and appending: %q [%d, %d)", got, j.start, j.end)
	}
}

// TestJournalIdleCost: a terminal that printed a prompt holds one small
// chunk, and a small journal never takes a full-size chunk.
func TestJournalIdleCost(t *testing.T) {
	j := newJournal(4 << 20)
	j.append([]byte("user@host:~$ "))
	if n := j.allocated(); n != journalInitial {
		t.Fatalf("an idle terminal's journal holds %d bytes of storage, want %d", n, journalInitial)
	}
	small := newJournal(1000)
	small.append(numbered(0, 5000))
	if n := small.allocated(); n > 2000 {
		t.Fatalf("a 1000-byte journal holds %d bytes of storage", n)
	}
	if !bytes.Equal(small.bytes(), numbered(0, 5000)[4000:]) {
		t.Fatal("a small journal keeps the wrong bytes")
	}
	one := newJournal(1)
	one.append([]byte("abc"))
	if string(one.bytes()) != "c" || one.start != 2 {
		t.Fatalf("a 1-byte journal keeps %q from %d", one.bytes(), one.start)
	}
}

// TestJournalRestore is what a live upgrade does: a journal that starts at
// an offset other than 0, filled from the bytes handed over.
func TestJournalRestore(t *testing.T) {
	old := newJournal(3*journalChunk + 100)
	all := numbered(0, 10*journalChunk)
	old.append(all)
	var handed bytes.Buffer
	old.writeTo(&handed)
	j := newJournal(old.limit)
	j.start, j.end = old.start, old.start
	j.append(handed.Bytes())
	if j.start != old.start || j.end != old.end || !bytes.Equal(j.bytes(), all[old.start:]) {
		t.Fatalf("restored [%d, %d), want [%d, %d)", j.start, j.end, old.start, old.end)
	}
	dst := make([]byte, 10)
	if n := j.copyOut(dst, old.end-10); n != 10 || !bytes.Equal(dst, all[len(all)-10:]) {
		t.Fatalf("copyOut near the end of a restored journal: %d %q", n, dst)
	}
}

// TestJournalFullRingAllocatesNothing: once a journal is full, evicted
// chunks are the ones it fills next (through the pool): a flooding
// terminal makes no garbage.
func TestJournalFullRingAllocatesNothing(t *testing.T) {
	j := newJournal(1 << 20)
	p := numbered(0, 4096)
	for j.end < 4<<20 {
		j.append(p)
	}
	allocs := testing.AllocsPerRun(1000, func() { j.append(p) })
	// A pool Get can allocate when the collector emptied the pool meanwhile.
	if allocs > 0.1 {
		t.Fatalf("%.2f allocations per append into a full journal", allocs)
	}
}

func BenchmarkJournalAppend(b *testing.B) {
	j := newJournal(4 << 20)
	p := numbered(0, 64<<10)
	b.SetBytes(int64(len(p)))
	for i := 0; i < b.N; i++ {
		j.append(p)
	}
}

// TestJournalEvictsWholeChunks: a full ring evicted the way the reader
// does (evictAmount) gives a chunk back at every eviction, so that its
// storage stays within one chunk of its limit.
func TestJournalEvictsWholeChunks(t *testing.T) {
	for _, limit := range []int{1 << 20, 1<<20 + 3000, 200 << 10} {
		tm := &term{j: newJournal(limit)}
		p := numbered(0, 4000)
		peak := 0
		for tm.j.end < uint64(5*limit) {
			r := tm.j.reserve(len(p))
			if r == nil {
				tm.j.evict(min(tm.j.size, tm.evictAmount()))
				continue
			}
			tm.j.commit(copy(r, p))
			peak = max(peak, tm.j.allocated())
		}
		if peak > limit+journalChunk {
			t.Errorf("journal of %d bytes: storage reached %d", limit, peak)
		}
		if tm.j.size < limit-tm.evictStep()-tm.evictStep()/2 {
			t.Errorf("journal of %d bytes keeps only %d", limit, tm.j.size)
		}
	}
}
