//go:build unix

package persist

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

func testDiskDir(t *testing.T, max int64) *diskDir {
	t.Helper()
	d, err := openDiskDir(filepath.Join(t.TempDir(), "j"), "srv", max, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	return d
}

// appendAll writes b to st in records of at most rec bytes from offset off.
func appendAll(st *diskStore, b []byte, off uint64, rec int) {
	for len(b) > 0 {
		n := min(rec, len(b))
		st.append(b[:n], off)
		b, off = b[n:], off+uint64(n)
	}
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+diskSegSuffix))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// recoverOnly reads d's directory again, as the next server would.
func recoverOnly(t *testing.T, d *diskDir) []recovered {
	t.Helper()
	d2 := newDiskDir(d.path, d.max, t.Logf)
	return d2.recover(true)
}

// A torn last record (a crash in the middle of its write) is cut off,
// and so is a record whose checksum does not match, with everything
// after it: what is recovered is a prefix of what was written, and the
// files are cut to it.
func TestDiskJournalTornRecord(t *testing.T) {
	d := testDiskDir(t, 0)
	st, err := d.create(diskMeta{ID: "a", Cmd: "/bin/sh", Journal: 1 << 20, Opened: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := numbered(0, 100_000)
	appendAll(st, data, 0, 4096)
	segs := segFiles(t, st.dir)
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	whole, _ := os.Stat(segs[0])
	// A record cut short: its header says 4096 bytes, 100 follow.
	torn := append([]byte{0, 16, 0, 0, 1, 2, 3, 4}, make([]byte, 100)...)
	f, err := os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn)
	f.Close()
	rs := recoverOnly(t, d)
	if len(rs) != 1 || !bytes.Equal(rs[0].data, data) || rs[0].start != 0 || rs[0].cut != int64(len(torn)) {
		t.Fatalf("after a torn record: %d recovered, %d bytes from %d, cut %d; want all %d bytes, cut %d",
			len(rs), len(rs[0].data), rs[0].start, rs[0].cut, len(data), len(torn))
	}
	if fi, _ := os.Stat(segs[0]); fi.Size() != whole.Size() {
		t.Fatalf("segment is %d bytes after recovery, want the %d of its whole records", fi.Size(), whole.Size())
	}
	if !rs[0].store.meta.Dead {
		t.Fatal("a recovered store is not marked dead")
	}

	// A flipped byte in the 10th record: it and all after it go.
	b, _ := os.ReadFile(segs[0])
	at := 9*(diskRecordHeader+4096) + diskRecordHeader + 17
	b[at] ^= 0xff
	os.WriteFile(segs[0], b, 0o600)
	rs = recoverOnly(t, d)
	if want := data[:9*4096]; !bytes.Equal(rs[0].data, want) {
		t.Fatalf("after a corrupt record: %d bytes recovered, want the %d before it", len(rs[0].data), len(want))
	}
}

// A segment that ends short of where the next begins (a power loss
// after the next segment's writes reached the disk and before the fsync
// loop's sync of this one did) ends what is recovered there: the
// records before the gap are served, the segments after it cut off, so
// that what is recovered stays a prefix of what was written.
func TestDiskJournalGapServesPrefix(t *testing.T) {
	d := testDiskDir(t, 0)
	st, err := d.create(diskMeta{ID: "a", Cmd: "/bin/sh", Journal: 256 << 10, Opened: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := numbered(0, 200<<10)
	appendAll(st, data, 0, 4096)
	segs := segFiles(t, st.dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments, want 3 or more", len(segs))
	}
	// The second segment loses its last three records.
	fi, err := os.Stat(segs[1])
	if err != nil {
		t.Fatal(err)
	}
	short := fi.Size() - 3*(diskRecordHeader+4096)
	if err := os.Truncate(segs[1], short); err != nil {
		t.Fatal(err)
	}
	var later int64
	for _, p := range segs[2:] {
		fi, _ := os.Stat(p)
		later += fi.Size()
	}
	first, _ := os.Stat(segs[0])
	want := data[:int(first.Size()+short)/(diskRecordHeader+4096)*4096]
	rs := recoverOnly(t, d)
	if len(rs) != 1 || rs[0].start != 0 || !bytes.Equal(rs[0].data, want) || rs[0].cut != later {
		t.Fatalf("after a gap: %d bytes recovered from %d, cut %d; want the first %d, cut %d", len(rs[0].data), rs[0].start, rs[0].cut, len(want), later)
	}
	if got := segFiles(t, st.dir); len(got) != 2 {
		t.Fatalf("%d segment files after recovery, want the 2 before the gap", len(got))
	}
}

// The segments a terminal is done with wait, open, for the fsync loop's
// next round instead of being fsync'd by the reader; those the
// per-terminal bound drops before it are closed unsynced. So the
// descriptors open stay within the segments kept, and a round leaves
// only the one appended to.
func TestDiskJournalFinishedSegmentsWaitForSync(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	// A loop that never ticks in the test: its rounds are called here.
	d, err := openDiskDir(filepath.Join(t.TempDir(), "j"), "srv", 0, time.Hour, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	const journal = 256 << 10
	st, err := d.create(diskMeta{ID: "a", Cmd: "/bin/sh", Journal: journal, Opened: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	open := func() (n int) {
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if p, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && filepath.Dir(p) == st.dir {
				n++
			}
		}
		return n
	}
	data := numbered(0, 4<<20) // 64 segments of 64 KiB
	kept := int(journal/st.segSize()) + 2
	for off := 0; off < len(data); off += 256 << 10 {
		appendAll(st, data[off:off+256<<10], uint64(off), 4096)
		if n, segs := open(), len(segFiles(t, st.dir)); n > segs || segs > kept {
			t.Fatalf("after %d bytes: %d descriptors open for %d segment files, want at most one a file and %d files", off+256<<10, n, segs, kept)
		}
	}
	if n := open(); n < 2 {
		t.Fatalf("%d descriptors open before the fsync round, want the finished segments' too", n)
	}
	st.sync()
	if n := open(); n != 1 {
		t.Fatalf("%d descriptors open after an fsync round, want 1 (the segment appended to)", n)
	}
	rs := recoverOnly(t, d)
	if r := rs[0]; r.start+uint64(len(r.data)) != uint64(len(data)) || !bytes.Equal(r.data, data[r.start:]) {
		t.Fatalf("recovered %d bytes from %d, want the newest of %d", len(r.data), r.start, len(data))
	}
}

// A terminal's files hold at least its journal's worth of its newest
// bytes and at most a segment more; recovery serves the newest journal's
// worth, at their offsets.
func TestDiskJournalPerTerminalBound(t *testing.T) {
	d := testDiskDir(t, 0)
	const journal = 256 << 10
	st, err := d.create(diskMeta{ID: "a", Cmd: "/bin/sh", Journal: journal, Opened: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := numbered(0, 3<<20)
	appendAll(st, data, 0, 4000)
	var size int64
	for _, p := range segFiles(t, st.dir) {
		fi, _ := os.Stat(p)
		size += fi.Size()
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
	limit := int64(journal) + st.segSize() + st.segSize()/4000*diskRecordHeader + 2*(4000+diskRecordHeader)
	if size < journal || size > limit || d.used.Load() != size {
		t.Fatalf("files hold %d bytes (tally %d), want %d..%d", size, d.used.Load(), journal, limit)
	}
	rs := recoverOnly(t, d)
	r := rs[0]
	if r.start+uint64(len(r.data)) != uint64(len(data)) || len(r.data) != journal || !bytes.Equal(r.data, data[r.start:]) {
		t.Fatalf("recovered %d bytes from %d, want the last %d of %d", len(r.data), r.start, journal, len(data))
	}
	for _, p := range []string{filepath.Dir(st.dir), st.dir} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", p, fi.Mode().Perm())
		}
	}
}

// Over the directory's bound, dead terminals' files go first (oldest
// opened first), then exited ones', and only then the oldest segments of
// live terminals; the server is told of each terminal dropped.
func TestDiskJournalDirBound(t *testing.T) {
	const journal = 256 << 10
	d := testDiskDir(t, 1<<30)
	mk := func(id string, opened time.Time, n int) *diskStore {
		st, err := d.create(diskMeta{ID: id, Cmd: "/bin/sh", Journal: journal, Opened: opened}, 0)
		if err != nil {
			t.Fatal(err)
		}
		appendAll(st, numbered(0, n), 0, 4096)
		return st
	}
	now := time.Now()
	deadOld := mk("dead-old", now.Add(-3*time.Hour), 200<<10)
	deadNew := mk("dead-new", now.Add(-2*time.Hour), 200<<10)
	exited := mk("exited", now.Add(-4*time.Hour), 200<<10)
	code := 0
	exited.exited(proto.Exit{TerminalID: "exited", ExitCode: &code})
	live := mk("live", now.Add(-5*time.Hour), 100<<10)
	deadOld.dead, deadNew.dead = true, true
	var dropped []string
	d.onDrop = func(st *diskStore) { dropped = append(dropped, st.meta.ID) }
	used := d.used.Load()

	// Room for all but the oldest dead terminal's files.
	d.max = used - 100<<10
	d.enforce()
	if len(dropped) != 1 || dropped[0] != "dead-old" || exists(deadOld.dir) || !exists(deadNew.dir) {
		t.Fatalf("dropped %v (want dead-old only)", dropped)
	}
	// Room for the live terminal's alone: the dead and the exited go.
	d.max = 150 << 10
	d.enforce()
	if want := []string{"dead-old", "dead-new", "exited"}; len(dropped) != 3 || dropped[1] != want[1] || dropped[2] != want[2] {
		t.Fatalf("dropped %v, want %v", dropped, want)
	}
	// The live terminal grows past the bound: its oldest segments go,
	// the one being written stays, and it is not dropped.
	// (Appends over the bound enforce it in the background: the bound
	// is lifted while it grows, so that the test's enforce is the one.)
	d.max = 1 << 30
	appendAll(live, numbered(0, 400<<10), 100<<10, 4096)
	d.max = 100 << 10
	d.enforce()
	if len(dropped) != 3 || !exists(live.dir) || d.used.Load() > 100<<10 || len(live.segs) == 0 {
		t.Fatalf("live terminal over the bound: dropped %v, %d bytes used, %d segments", dropped, d.used.Load(), len(live.segs))
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// The directory must be ours alone: one open to others, a symlink, or a
// file is refused.
func TestDiskJournalDirPrivate(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	private := filepath.Join(base, "private")
	os.Mkdir(private, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(private, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for _, dir := range []string{open, link, file, "relative/dir"} {
		if _, err := openDiskDir(dir, "srv", 0, 0, t.Logf); err == nil {
			t.Errorf("--journal-dir %s was taken", dir)
		} else {
			t.Logf("%s: %v", dir, err)
		}
	}
	if _, err := openDiskDir(private, "srv", 0, 0, t.Logf); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDiskStoreAppendRead is the reader's write of one read to its
// files, with the produced counter (a store to a shared mapping) and
// without it: the counter's cost per read.
func BenchmarkDiskStoreAppendRead(b *testing.B) {
	for _, size := range []int{1 << 10, 16 << 10} {
		for _, counted := range []bool{false, true} {
			b.Run(fmt.Sprintf("read=%d/counted=%v", size, counted), func(b *testing.B) {
				d, err := openDiskDir(filepath.Join(b.TempDir(), "j"), "srv", 1<<40, 0, b.Logf)
				if err != nil {
					b.Fatal(err)
				}
				defer d.close()
				st, err := d.create(diskMeta{ID: "b", Journal: 1 << 20}, 0)
				if err != nil {
					b.Fatal(err)
				}
				if !counted {
					st.mu.Lock()
					st.unmapLocked()
					st.mu.Unlock()
				}
				p := make([]byte, size)
				b.SetBytes(int64(size))
				var off uint64
				for b.Loop() {
					st.appendRead(p, nil, off)
					off += uint64(size)
				}
				st.remove()
			})
		}
	}
}

// BenchmarkStoreCounter is the counter's whole cost per read: one store
// to the shared mapping, with the fault guard.
func BenchmarkStoreCounter(b *testing.B) {
	d, err := openDiskDir(filepath.Join(b.TempDir(), "j"), "srv", 1<<40, 0, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	defer d.close()
	st, err := d.create(diskMeta{ID: "b", Journal: 1 << 20}, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.remove()
	var v uint64
	for b.Loop() {
		v++
		storeCounter(st.counter, v)
	}
}

// A name in the journal directory that is not a file of ours alone (a
// hard link to a file elsewhere here; another user's file, which a
// writable directory on the way lets that user swap in) gets nothing
// written to it: the file it names keeps what it held. meta.json.new
// holds the OPEN's environment, and the counter file used to be truncated
// and written through such a link too.
func TestDiskJournalWritesNoFileItDidNotMake(t *testing.T) {
	d := testDiskDir(t, 0)
	st, err := d.create(diskMeta{ID: "a", Cmd: "/bin/sh", Journal: 1 << 20, Opened: time.Now(), Env: map[string]string{"TOKEN": "secret"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere")
	for _, name := range []string{diskMetaName + ".new", diskCounterName} {
		if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(st.dir, name)
		os.Remove(p)
		if err := os.Link(outside, p); err != nil {
			t.Fatal(err)
		}
		st.mu.Lock()
		if name == diskCounterName {
			st.unmapLocked()
			err = st.mapCounter(5, true)
		} else {
			err = st.writeMeta()
		}
		st.mu.Unlock()
		if err == nil || !strings.Contains(err.Error(), "2 names") {
			t.Errorf("%s as a second name of another file: error %v, want a refusal", name, err)
		}
		if b, _ := os.ReadFile(outside); string(b) != "keep" {
			t.Errorf("%s as a second name of another file: that file now holds %q", name, b)
		}
		os.Remove(p)
	}
}

// Recovery takes only files of our own user with one name: a meta.json
// that is not (REVIVE would run the command it names) leaves its
// terminal unrecovered.
func TestDiskJournalRecoversOnlyOurFiles(t *testing.T) {
	d := testDiskDir(t, 0)
	mk := func(id string) *diskStore {
		st, err := d.create(diskMeta{ID: id, Cmd: "/bin/sh", Journal: 1 << 20, Opened: time.Now()}, 0)
		if err != nil {
			t.Fatal(err)
		}
		appendAll(st, []byte("output of "+id), 0, 4096)
		return st
	}
	mk("ours")
	linked := mk("linked")
	if err := os.Link(filepath.Join(linked.dir, diskMetaName), filepath.Join(t.TempDir(), "second-name")); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"ours": true}
	if os.Geteuid() == 0 {
		// Root can give a file away; others cannot make one that
		// belongs to someone else.
		foreign := mk("foreign")
		if err := os.Chown(filepath.Join(foreign.dir, diskMetaName), 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, r := range recoverOnly(t, d) {
		got[r.store.meta.ID] = true
	}
	if len(got) != len(want) || !got["ours"] {
		t.Fatalf("recovered %v, want only %v", got, want)
	}
}

// Recovery deletes nothing it did not make. DIR/NAME may be a directory
// the user already had: its directories used to be removed whole, with
// everything in them, as journals that failed to recover. Now a name
// that is not a terminal's directory is left as it is, and one that is
// but holds no journal loses only the files a store writes.
func TestDiskJournalRecoveryDeletesOnlyItsOwn(t *testing.T) {
	d := testDiskDir(t, 0)
	st, err := d.create(diskMeta{ID: "a", Cmd: "/bin/sh", Journal: 1 << 20, Opened: time.Now()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(st, []byte("output"), 0, 4096)
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The user's own directory, and a leftover of a crash between a
	// terminal directory's mkdir and its meta.json, which also holds a
	// file the server never writes.
	users := filepath.Join(d.path, "notes", "todo.txt")
	write(users, "precious")
	leftover := filepath.Join(d.path, "20260101T000000-0123456789abcdef")
	write(filepath.Join(leftover, diskCounterName), "12345678")
	write(filepath.Join(leftover, "00000000000000000000"+diskSegSuffix), "torn")
	foreign := filepath.Join(d.path, "20260101T000001-0123456789abcdef")
	write(filepath.Join(foreign, diskCounterName), "12345678")
	write(filepath.Join(foreign, "mine.txt"), "also precious")

	rs := recoverOnly(t, d)
	if len(rs) != 1 || rs[0].store.meta.ID != "a" {
		t.Fatalf("recovered %d stores, want a's alone", len(rs))
	}
	if b, err := os.ReadFile(users); err != nil || string(b) != "precious" {
		t.Errorf("the user's file after recovery: %q, %v", b, err)
	}
	if exists(leftover) {
		t.Errorf("a terminal directory without a journal was left: %s", leftover)
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "mine.txt")); err != nil || string(b) != "also precious" {
		t.Errorf("a file the server never writes, after recovery: %q, %v", b, err)
	}
	if exists(filepath.Join(foreign, diskCounterName)) {
		t.Error("the store's own file in a directory that failed recovery was left")
	}
}
