//go:build unix

package persist

import (
	"bytes"
	"testing"
)

// Chunks lent to a viewer's write may fall out of the journal, but their
// storage is not reused until they are given back: the journal refills
// from the chunk pool meanwhile, and the lent bytes stay what they were.
// Given back, an evicted chunk is released; one still in the journal is
// not.
func TestJournalLentChunksOutliveEviction(t *testing.T) {
	j := newJournal(4 * journalChunk)
	j.append(numbered(0, 3*journalChunk))
	off := j.start + journalChunk/2
	n := journalChunk + 100 // across two chunks
	want := append([]byte(nil), j.copyFrom(off)[:n]...)
	slices, lent := j.lend(nil, nil, off, n)
	if len(lent) != 2 {
		t.Fatalf("lent %d chunks, want 2", len(lent))
	}
	// The journal wraps around several times: every chunk it had falls
	// out, and new ones come from the pool the evicted ones go back to.
	for i := 0; i < 8; i++ {
		j.append(numbered(1000000*(i+1), 2*journalChunk))
	}
	if j.start <= off+uint64(n) {
		t.Fatalf("the lent bytes are still in the journal (start %d)", j.start)
	}
	if got := bytes.Join(slices, nil); !bytes.Equal(got, want) {
		t.Fatal("bytes lent to a write changed after they fell out of the journal")
	}
	if len(j.lent) != 2 || !j.lent[&lent[0][0]].evicted || !j.lent[&lent[1][0]].evicted {
		t.Fatalf("loans %v: want both chunks lent and evicted", j.lent)
	}
	j.giveBack(lent)
	if len(j.lent) != 0 {
		t.Fatalf("loans left after giveBack: %v", j.lent)
	}

	// Lent twice and given back once: still lent; a chunk that never
	// left the journal is not released when given back.
	off = j.end - 10
	_, a := j.lend(nil, nil, off, 10)
	_, b := j.lend(nil, nil, off, 10)
	j.giveBack(a)
	if l := j.lent[&b[0][0]]; l == nil || l.n != 1 || l.evicted {
		t.Fatalf("after one of two loans given back: %+v", l)
	}
	j.giveBack(b)
	if len(j.lent) != 0 {
		t.Fatalf("loans left: %v", j.lent)
	}
	if got := j.copyFrom(j.end - 10); len(got) != 10 {
		t.Fatalf("the journal's tail after the loans: %q", got)
	}
}
