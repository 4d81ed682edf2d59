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
		if j.size > j.limit || len(j.buf) > j.limit {
			t.Fatalf("journal holds %d bytes in %d of storage, over its limit %d", j.size, len(j.buf), j.limit)
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
	if len(j.buf) > journalInitial {
		t.Fatalf("an idle terminal's journal allocated %d bytes", len(j.buf))
	}
	j.append(numbered(0, 100000))
	if len(j.buf) < 100002 || len(j.buf) > 4<<20 {
		t.Fatalf("allocation %d after 100002 bytes", len(j.buf))
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

func BenchmarkJournalAppend(b *testing.B) {
	j := newJournal(4 << 20)
	p := numbered(0, 64<<10)
	b.SetBytes(int64(len(p)))
	for i := 0; i < b.N; i++ {
		j.append(p)
	}
}
