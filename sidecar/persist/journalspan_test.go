//go:build unix

package persist

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestJournalSpanReads: reads that go on past a chunk's end into the
// next (reserveSpan, commitSpan), of every length up to what was
// reserved, keep the journal's bytes and offsets right, are cut at the
// chunk's end no more, and leave at most one spare chunk beside the
// storage reserve alone would use.
func TestJournalSpanReads(t *testing.T) {
	const limit = 6*journalChunk + 5000
	j := newJournal(limit)
	all := numbered(0, 50*journalChunk+99)
	spans := 0
	for step, p := 0, all; len(p) > 0; step++ {
		want := []int{journalChunk, 60000, 4095, journalChunk, 1}[step%5]
		a, b := j.reserveSpan(want)
		if a == nil {
			if j.size != limit {
				t.Fatalf("reserveSpan refused with %d of %d bytes kept", j.size, limit)
			}
			j.evict(min(j.size, journalChunk+7))
			continue
		}
		if b != nil {
			spans++
			if len(a)+len(b) != min(want, limit-j.size) {
				t.Fatalf("span of %d+%d bytes for %d wanted with %d of room", len(a), len(b), want, limit-j.size)
			}
		}
		// The read takes all, part of a, exactly a, or into b.
		n := []int{len(a) + len(b), len(a) / 2, len(a), len(a) + len(b)/3}[step%4]
		n = min(n, len(p))
		na := copy(a, p[:n])
		copy(b, p[na:n])
		j.commitSpan(n, len(a))
		p = p[n:]
		if extra := j.allocated() - j.size; extra > 2*journalChunk {
			t.Fatalf("%d bytes kept in %d of storage", j.size, j.allocated())
		}
	}
	if spans == 0 {
		t.Fatal("no read spanned two chunks")
	}
	if j.end != uint64(len(all)) || !bytes.Equal(j.bytes(), all[j.start:]) {
		t.Fatalf("the journal keeps the wrong bytes [%d, %d)", j.start, j.end)
	}
	// free gives everything back, spare included.
	j.free()
	if j.chunks != nil || j.spare != nil || j.size != 0 || j.allocated() != 0 {
		t.Fatalf("after free: %d chunks, spare %v, size %d", len(j.chunks), j.spare != nil, j.size)
	}
}

// TestJournalSpanSmallChunks: an idle terminal's small first chunk, and
// a journal smaller than a chunk, take no spare.
func TestJournalSpanSmallChunks(t *testing.T) {
	for _, limit := range []int{1 << 20, 10000} {
		j := newJournal(limit)
		a, b := j.reserveSpan(journalChunk)
		if b != nil || len(a) != min(journalInitial, limit) || j.spare != nil {
			t.Fatalf("journal of %d: first reserveSpan gave %d+%d bytes, spare %v", limit, len(a), len(b), j.spare != nil)
		}
	}
}

// TestChunkArena: chunks come from aligned slabs, are reused most
// recently freed first, and past keepHot free ones are still reused.
func TestChunkArena(t *testing.T) {
	a := newChunkArena()
	var got []*[journalChunk]byte
	for range 2*keepHot + 3 {
		c := a.Get().(*[journalChunk]byte)
		c[0], c[journalChunk-1] = 1, 2 // writable, all of it
		got = append(got, c)
	}
	if !raceBuild {
		if off := uintptr(unsafe.Pointer(got[0])) % slabSize; off != 0 {
			t.Fatalf("the first chunk is %d bytes into a huge page", off)
		}
	}
	for _, c := range got {
		a.Put(c)
	}
	if len(a.hot) != keepHot || len(a.cold) != len(got)-keepHot {
		t.Fatalf("%d hot and %d cold free chunks after %d were put back", len(a.hot), len(a.cold), len(got))
	}
	if c := a.Get().(*[journalChunk]byte); c != got[keepHot-1] {
		t.Fatal("Get did not return the most recently freed chunk")
	}
	for range len(got) - 1 {
		a.Get()
	}
	if len(a.hot)+len(a.cold) != 0 {
		t.Fatal("free chunks left after taking back as many as were put")
	}
}
