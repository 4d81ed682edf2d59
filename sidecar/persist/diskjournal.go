//go:build unix

package persist

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ptyplex/ptyplex/proto"
	"golang.org/x/sys/unix"
)

// --journal-dir: every terminal's journal also on disk, so that a crash
// of the server (SIGKILL, the OOM killer, a reboot) loses no output.
//
// Layout: DIR/NAME/KEY/ per terminal (NAME the server's name, KEY random),
// holding meta.json (what REVIVE needs, and the exit once known) and
// segment files named by the offset of their first byte (%020d.seg).
// A segment is a run of records, each a header (the payload's length and
// a CRC-32C of length and payload, little-endian uint32s) and the payload:
// the bytes of one PTY read. A record cut short by a crash, or one whose
// checksum does not match, ends the segment; recovery cuts it off.
//
// Flush policy: the reader writes each read's bytes with one write(2)
// before it commits them to the journal in memory, so no host is ever
// sent a byte the file does not have, and a SIGKILL of the server loses
// only what the kernel still held for the PTY (never read) and the one
// read in flight. Every diskSyncDefault (--journal-sync) the files written
// since are fsync'd: a reboot or power loss loses at most that much more.
// A segment the reader is done with is left open, unsynced, for the
// fsync loop's next round, like the segment being appended to: not
// fsync'd by the reader at once. That fsync made the reader wait on the
// disk (a megabyte of a 4 MiB journal's segment), and made the disk
// write every byte of a flood, most of which the per-terminal bound
// removes again within the round: a segment dropped before the round
// is closed unsynced, and its bytes never need to reach the disk. That
// was most of what --journal-dir cost a flooding terminal. A later
// segment may then reach the disk before an earlier one's tail does;
// recovery serves records only up to the first gap or torn record, so
// what it serves is still a prefix.
//
// What the policy could not keep is counted: each store has a file,
// produced, whose 8 bytes (native-endian) the reader sets, mapped shared,
// to the offset after the bytes of each read before it writes them, a
// store to memory rather than a system call. The page cache keeps it
// across a SIGKILL or the OOM killer (not across a power loss, after
// which it may lag): the next server reports the count minus the end of
// what the segments held as the dead terminal's crashLost. What the
// kernel held for the PTY, never read, is counted nowhere.
//
// The directory holds everything the user's terminals printed, and their
// environments: it is the user's alone (0700, files 0600, refused if it
// belongs to another uid, is a symlink or is open to others).

const (
	diskRecordHeader = 8
	// diskRecordMax is the largest payload recovery accepts: one read
	// is at most readChunk; anything larger is a corrupt length.
	diskRecordMax = 1 << 20
	// DefaultJournalDirMax bounds a server's part of --journal-dir.
	DefaultJournalDirMax = 1 << 30
	// DefaultJournalSync is how often written journal files are fsync'd.
	DefaultJournalSync = time.Second
	diskMetaName       = "meta.json"
	diskCounterName    = "produced"
	diskSegSuffix      = ".seg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// diskMeta is a terminal's meta.json.
type diskMeta struct {
	Version int               `json:"version"`
	ID      string            `json:"terminalId"`
	Cmd     string            `json:"cmd"`
	Args    []string          `json:"args,omitempty"`
	Cwd     *string           `json:"cwd,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// BaseEnv is the environment Env was merged over: the bridge's
	// (its HELLO's) or the server's own, so that a REVIVE after a
	// restart starts from the same one. Absent in the files of older
	// servers, whose revived terminals start from the reviving server's.
	BaseEnv   []string  `json:"baseEnv,omitempty"`
	UTF8      bool      `json:"utf8,omitempty"`
	Cols      uint16    `json:"cols"`
	Rows      uint16    `json:"rows"`
	Journal   int       `json:"journal"`
	Park      bool      `json:"park,omitempty"`
	PID       int       `json:"pid"`
	ServerPID int       `json:"serverPid"`
	Opened    time.Time `json:"opened"`
	// NodePtyTermios is the OPEN's nodePtyTermios, for REVIVE.
	NodePtyTermios bool `json:"nodePtyTermios,omitempty"`
	// Exited is set once the child was reaped, with its status.
	Exited   bool   `json:"exited,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// Dead is set when a server found this terminal's server gone.
	Dead bool `json:"dead,omitempty"`
}

// diskDir is a server's part of --journal-dir. mu guards the set of
// stores and the bytes they use; each store has its own lock for its
// files, taken after diskDir.mu when both are.
type diskDir struct {
	path string
	max  int64
	logf func(string, ...any)

	// onDrop, if set, is told of a dead or exited terminal whose files
	// the bound removes, before they go: the server drops it too.
	onDrop func(*diskStore)

	mu     sync.Mutex
	stores map[*diskStore]struct{}
	// used is the bytes of every store's segment files; atomic, since a
	// store changes it under its own lock, which enforce takes after mu.
	used      atomic.Int64
	enforcing atomic.Bool
	done      chan struct{}
	// syncing: the fsync loop runs (--journal-sync is not 0), so that
	// finished segments wait for it rather than being closed unsynced.
	syncing bool
}

// openDiskDir makes sure root and root/name exist and are ours alone,
// and starts the fsync loop.
func openDiskDir(root, name string, max int64, every time.Duration, logf func(string, ...any)) (*diskDir, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("--journal-dir %q: not an absolute path", root)
	}
	if err := safeParents(root); err != nil {
		return nil, err
	}
	if err := privateDir(root); err != nil {
		return nil, err
	}
	path := filepath.Join(root, name)
	if err := privateDir(path); err != nil {
		return nil, err
	}
	if max <= 0 {
		max = DefaultJournalDirMax
	}
	d := newDiskDir(path, max, logf)
	if every > 0 {
		d.syncing = true
		go d.syncLoop(every)
	}
	return d, nil
}

func newDiskDir(path string, max int64, logf func(string, ...any)) *diskDir {
	return &diskDir{path: path, max: max, logf: logf, stores: map[*diskStore]struct{}{}, done: make(chan struct{})}
}

// safeParents refuses dir unless every directory above it is ours or
// root's and writable by nobody else, or sticky (as /tmp is, where no
// one may remove or rename what another put there), as ssh wants of the
// directories above ~/.ssh. A directory that another user may write lets
// that user rename dir away and put one of their own in its place,
// between two of our checks or while we run: the journals, the
// environment in each meta.json, and what REVIVE would run. The
// directories are those of the path as named and, if a symbolic link is
// on the way, those of where it leads; a link itself must be ours or
// root's (in a sticky directory, its owner may replace it).
func safeParents(dir string) error {
	parent := filepath.Dir(filepath.Clean(dir))
	dirs := ancestors(parent)
	if real, err := filepath.EvalSymlinks(parent); err == nil && real != parent {
		dirs = append(dirs, ancestors(real)...)
	}
	me := uint32(os.Geteuid())
	for _, d := range dirs {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return fmt.Errorf("journal directory %s: checking %s above it: %w", dir, d, err)
		}
		if st.Uid != me && st.Uid != 0 {
			return fmt.Errorf("journal directory %s: %s above it belongs to uid %d, who could replace what is in it (it must be ours, uid %d, or root's)", dir, d, st.Uid, me)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
			return fmt.Errorf("journal directory %s: other users may write to %s above it (mode %04o), and so remove or replace it (chmod go-w %s, or +t as /tmp is)", dir, d, st.Mode&0o7777, d)
		}
	}
	return nil
}

// ancestors returns dir and every directory above it, up to the root,
// dir being absolute and clean.
func ancestors(dir string) []string {
	out := []string{dir}
	for d := dir; d != filepath.Dir(d); {
		d = filepath.Dir(d)
		out = append(out, d)
	}
	return out
}

// privateDir creates dir (0700) if it is missing, and refuses it unless
// it is a real directory of our own user that nobody else may enter.
func privateDir(dir string) error {
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("journal directory %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("journal directory %s: %w", dir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("journal directory %s: not a directory (a symlink is refused)", dir)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("journal directory %s: owned by uid %d, not by us (%d)", dir, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		return fmt.Errorf("journal directory %s: mode %04o lets others in (chmod 700 it)", dir, st.Mode&0o777)
	}
	return nil
}

func (d *diskDir) close() { close(d.done) }

func (d *diskDir) syncLoop(every time.Duration) {
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-d.done:
			return
		case <-tk.C:
		}
		d.syncAll()
	}
}

// syncAll is a round of the fsync loop: every store's files written
// since the last round are made durable.
func (d *diskDir) syncAll() {
	d.mu.Lock()
	all := make([]*diskStore, 0, len(d.stores))
	for s := range d.stores {
		all = append(all, s)
	}
	d.mu.Unlock()
	for _, s := range all {
		s.sync()
	}
}

// diskStore is one terminal's files. mu guards everything below it; the
// reader appends with it, the fsync loop and the bound take it too.
type diskStore struct {
	d   *diskDir
	dir string

	mu   sync.Mutex
	meta diskMeta
	segs []diskSeg // oldest first; the last is appended to
	fd   int       // the last segment, -1 when none is open
	// unsynced holds the descriptors of finished segments (by their
	// start) written since the last fsync: the fsync loop syncs and
	// closes them; a segment dropped before it does is closed unsynced.
	unsynced map[uint64]int
	end      uint64 // offset after the last byte written
	kept     int64  // payload bytes in segs
	dirty    bool   // written since the last fsync
	broken   bool   // a write failed: nothing more is written
	// failure says why it broke, for LIST; set once, read without mu
	// (LIST holds the terminal's lock, and the store's is taken under
	// other locks).
	failure atomic.Pointer[string]
	// healAt is when, after a failed write, the terminal's reader next
	// tries a new store in this one's place (UnixNano; 0: never).
	healAt atomic.Int64
	// quiet keeps a failure off the log: a store being tried in a failed
	// one's place, whose failure the log already told.
	quiet bool
	gone  bool // removed
	hdr   [diskRecordHeader]byte
	// dead is set for a store a previous server left: its terminal is
	// dead, and the bound drops it first.
	dead bool
	// counter is the produced file, mapped shared (nil: none, or it
	// faulted): the offset after the last read, set before its bytes
	// are written.
	counter []byte
	// crashLost is, for a recovered store, how far the counter was past
	// the end of the segments (set before the store is shared).
	crashLost uint64
}

type diskSeg struct {
	start uint64
	size  int64 // file bytes, headers included
	n     int64 // payload bytes
}

// segSize is the size at which a store starts a new segment: a quarter
// of the journal, so that the files hold at most a quarter more than it.
func (s *diskStore) segSize() int64 { return max(int64(s.meta.Journal)/4, 64<<10) }

// create starts the store of a new terminal, whose journal begins at
// offset start.
func (d *diskDir) create(m diskMeta, start uint64) (*diskStore, error) {
	var key [8]byte
	rand.Read(key[:])
	dir := filepath.Join(d.path, time.Now().UTC().Format("20060102T150405")+"-"+hex.EncodeToString(key[:]))
	if err := unix.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal directory: %w", err)
	}
	m.Version, m.ServerPID = 1, os.Getpid()
	s := &diskStore{d: d, dir: dir, meta: m, fd: -1, end: start}
	if err := s.writeMeta(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.mapCounter(start, true); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	d.mu.Lock()
	d.stores[s] = struct{}{}
	d.mu.Unlock()
	return s, nil
}

// writeMeta replaces meta.json (a new file renamed over the old one, so
// that a crash leaves one or the other whole). Called with mu held, or
// before the store is shared.
func (s *diskStore) writeMeta() error {
	b, err := json.Marshal(s.meta)
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, diskMetaName+".new")
	if err := writeFileNoFollow(tmp, b); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, diskMetaName)); err != nil {
		return fmt.Errorf("journal meta: %w", err)
	}
	return nil
}

// ownFile refuses the open file fd unless it is a regular file of our
// own user with one name. The directory is ours and 0700, but a
// directory on its way that another user may write (a non-sticky shared
// parent) lets that user swap a name in it while we run: what they
// planted must neither receive a journal, the environment in meta.json
// included, nor be recovered, since REVIVE runs the command a meta.json
// names. So every file is checked on its descriptor before a byte is
// written to it or believed from it.
func ownFile(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("journal file %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("journal file %s: not a regular file", path)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("journal file %s: owned by uid %d, not by us (%d)", path, st.Uid, os.Geteuid())
	case st.Nlink != 1:
		return fmt.Errorf("journal file %s: it has %d names (hard links)", path, st.Nlink)
	}
	return nil
}

func writeFileNoFollow(path string, b []byte) error {
	// Truncated only once it is known to be ours alone (ownFile).
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("journal file %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := ownFile(fd, path); err != nil {
		return err
	}
	if err := unix.Ftruncate(fd, 0); err != nil {
		return fmt.Errorf("journal file %s: %w", path, err)
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return fmt.Errorf("journal file %s: %w", path, err)
		}
		b = b[n:]
	}
	return nil
}

// mapCounter maps the store's produced file, made (holding end) if
// fresh, else opened as it is. Called before the store is shared, or with
// mu held. A file that cannot be made is an error; one that cannot be
// mapped is logged, and the store goes on without a count.
func (s *diskStore) mapCounter(end uint64, fresh bool) error {
	path := filepath.Join(s.dir, diskCounterName)
	flags := unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if fresh {
		flags |= unix.O_CREAT
	}
	fd, err := unix.Open(path, flags, 0o600)
	if err != nil {
		return fmt.Errorf("journal file %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := ownFile(fd, path); err != nil {
		return err
	}
	if fresh {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return fmt.Errorf("journal file %s: %w", path, err)
		}
		// Written, not only sized: the page then has its room on the
		// disk, and a store to it needs none.
		var b [8]byte
		binary.NativeEndian.PutUint64(b[:], end)
		if n, err := unix.Pwrite(fd, b[:], 0); err != nil || n < len(b) {
			if err == nil {
				err = unix.ENOSPC
			}
			return fmt.Errorf("journal file %s: %w", path, err)
		}
	} else {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Size < 8 {
			return fmt.Errorf("journal file %s: not a count", path)
		}
	}
	m, err := unix.Mmap(fd, 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		s.d.logf("terminal %q: %s: %v (what a crash loses of it will not be counted)", s.meta.ID, path, err)
		return nil
	}
	s.counter = m
	return nil
}

// countLocked sets the store's counter to end, the offset after bytes
// about to be written.
func (s *diskStore) countLocked(end uint64) {
	if s.counter == nil || storeCounter(s.counter, end) {
		return
	}
	// The page could not be written (a file system out of room for a
	// copy-on-write page): no count from now on.
	s.d.logf("terminal %q: %s: a store faulted; what a crash loses of it will not be counted", s.meta.ID, s.dir)
	s.unmapLocked()
}

// storeCounter stores v in m, a mapping of a file: a fault (SIGBUS, the
// file system had no room for the page) is reported rather than fatal.
func storeCounter(m []byte, v uint64) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&m[0])), v)
	return true
}

func (s *diskStore) unmapLocked() {
	if s.counter != nil {
		unix.Munmap(s.counter)
		s.counter = nil
	}
}

// appendRead writes what one read put in a and then b, the bytes from
// offset off, a record for each that is not empty. The counter is set
// first: a crash during the writes leaves it past what they wrote.
func (s *diskStore) appendRead(a, b []byte, off uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return
	}
	s.countLocked(off + uint64(len(a)+len(b)))
	s.appendLocked(a, off)
	s.appendLocked(b, off+uint64(len(a)))
}

// append writes p, the bytes at offset off, as one record. A failed
// write is logged once and ends the store's writing: the terminal goes
// on, its output is never held up by the disk (its counter goes on, so
// that what the files do not have is counted after a crash).
func (s *diskStore) append(p []byte, off uint64) { s.appendRead(p, nil, off) }

func (s *diskStore) appendLocked(p []byte, off uint64) {
	if len(p) == 0 || s.broken {
		return
	}
	if off != s.end {
		// Cannot happen: every byte comes through here in order.
		s.failLocked(fmt.Errorf("write at offset %d, expected %d", off, s.end))
		return
	}
	if s.fd < 0 || s.segs[len(s.segs)-1].size >= s.segSize() {
		if err := s.rotateLocked(); err != nil {
			s.failLocked(err)
			return
		}
	}
	binary.LittleEndian.PutUint32(s.hdr[0:], uint32(len(p)))
	crc := crc32.Update(0, castagnoli, s.hdr[0:4])
	binary.LittleEndian.PutUint32(s.hdr[4:], crc32.Update(crc, castagnoli, p))
	want := diskRecordHeader + len(p)
	n, err := writev2(s.fd, s.hdr[:], p)
	if err == nil && n < want {
		// A short write to a regular file: the disk is full. The rest
		// of the record is left out; recovery cuts it off.
		err = fmt.Errorf("short write (%d of %d bytes): %w", n, want, unix.ENOSPC)
	}
	if n > 0 {
		seg := &s.segs[len(s.segs)-1]
		seg.size += int64(n)
		s.d.addUsed(int64(n))
	}
	if err != nil {
		s.failLocked(err)
		return
	}
	seg := &s.segs[len(s.segs)-1]
	seg.n += int64(len(p))
	s.kept += int64(len(p))
	s.end += uint64(len(p))
	s.dirty = true
	// The per-terminal bound: keep at least the journal's worth, in
	// whole segments.
	for len(s.segs) > 1 && s.kept-s.segs[0].n >= int64(s.meta.Journal) {
		s.dropOldestLocked()
	}
	if s.d.overLimit() && s.d.enforcing.CompareAndSwap(false, true) {
		go func() {
			defer s.d.enforcing.Store(false)
			s.d.enforce()
		}()
	}
}

func (s *diskStore) failLocked(err error) {
	s.broken = true
	msg := err.Error()
	s.failure.Store(&msg)
	s.postponeHeal()
	if s.quiet {
		return
	}
	s.d.logf("terminal %q: journal on disk (%s): %v; no more of its output is written there", s.meta.ID, s.dir, err)
}

// diskHealEvery is how often a terminal whose store failed looks for
// room for a new one (term.healDiskLocked): a disk that filled up may
// have room again. Looking is one statfs(2); a new store is tried only
// once the disk has room for the whole journal and diskHealSpare more.
const (
	diskHealEvery = time.Second
	diskHealSpare = 1 << 20
)

// healDue reports whether the store failed and it is time to try a new
// one in its place.
func (s *diskStore) healDue() bool {
	if s == nil {
		return false
	}
	at := s.healAt.Load()
	return at != 0 && time.Now().UnixNano() >= at
}

func (s *diskStore) postponeHeal() { s.healAt.Store(time.Now().Add(diskHealEvery).UnixNano()) }

// appendAll writes p, the bytes from offset off, as records of at most
// a read's size each (recovery takes a longer one for a corrupt length).
func (s *diskStore) appendAll(p []byte, off uint64) {
	for len(p) > 0 {
		n := min(len(p), readChunk)
		s.append(p[:n], off)
		p, off = p[n:], off+uint64(n)
	}
}

// problem is why the store stopped writing, "" while it writes.
func (s *diskStore) problem() string {
	if p := s.failure.Load(); p != nil {
		return *p
	}
	return ""
}

// rotateLocked starts a new segment at end.
func (s *diskStore) rotateLocked() error {
	if s.fd >= 0 {
		switch {
		case !s.dirty:
			unix.Close(s.fd) // the fsync loop synced all of it
		case s.d.syncing:
			if s.unsynced == nil {
				s.unsynced = map[uint64]int{}
			}
			s.unsynced[s.segs[len(s.segs)-1].start] = s.fd
		default:
			unix.Close(s.fd) // --journal-sync 0: never fsync'd
		}
		s.fd, s.dirty = -1, false
	}
	name := filepath.Join(s.dir, fmt.Sprintf("%020d%s", s.end, diskSegSuffix))
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("new segment: %w", err)
	}
	s.fd = fd
	s.segs = append(s.segs, diskSeg{start: s.end})
	return nil
}

func (s *diskStore) segPath(g diskSeg) string {
	return filepath.Join(s.dir, fmt.Sprintf("%020d%s", g.start, diskSegSuffix))
}

// dropOldestLocked removes the oldest segment (never the one appended to).
func (s *diskStore) dropOldestLocked() {
	g := s.segs[0]
	if fd, ok := s.unsynced[g.start]; ok {
		// Gone before its fsync: its bytes need never reach the disk.
		unix.Close(fd)
		delete(s.unsynced, g.start)
	}
	os.Remove(s.segPath(g))
	s.segs = s.segs[1:]
	s.kept -= g.n
	s.d.addUsed(-g.size)
}

// sync makes what was written since the last sync durable: the finished
// segments still kept, then the current one. The fsyncs run without the
// lock, the current segment's on a duplicate of its descriptor: the
// reader's appends do not wait for the disk meanwhile, and a rotation
// or removal cannot close a descriptor under it (the finished ones are
// this call's to close once taken).
func (s *diskStore) sync() {
	s.mu.Lock()
	if len(s.unsynced) == 0 && (!s.dirty || s.fd < 0) {
		s.mu.Unlock()
		return
	}
	fds := make([]int, 0, len(s.unsynced)+1)
	starts := make([]uint64, 0, len(s.unsynced))
	for start := range s.unsynced {
		starts = append(starts, start)
	}
	// Oldest first: what a power loss leaves is then more often a prefix.
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for _, start := range starts {
		fds = append(fds, s.unsynced[start])
		delete(s.unsynced, start)
	}
	if s.dirty && s.fd >= 0 {
		if fd, err := unix.FcntlInt(uintptr(s.fd), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			fds = append(fds, fd)
		}
		s.dirty = false
	}
	s.mu.Unlock()
	for _, fd := range fds {
		datasync(fd)
		unix.Close(fd)
	}
}

// exited records the child's end in meta.json.
func (s *diskStore) exited(e proto.Exit) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return
	}
	s.meta.Exited, s.meta.ExitCode, s.meta.Signal = true, e.ExitCode, e.Signal
	if err := s.writeMeta(); err != nil {
		s.d.logf("terminal %q: %v", s.meta.ID, err)
	}
}

// resized records the terminal's new size (a REVIVE starts at it, and
// the old screen is drawn at it).
func (s *diskStore) resized(cols, rows uint16) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || (s.meta.Cols == cols && s.meta.Rows == rows) {
		return
	}
	s.meta.Cols, s.meta.Rows = cols, rows
	if err := s.writeMeta(); err != nil {
		s.d.logf("terminal %q: %v", s.meta.ID, err)
	}
}

// remove deletes the store's files: its terminal is gone from the server.
func (s *diskStore) remove() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return
	}
	s.gone = true
	s.unmapLocked()
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
	for start, fd := range s.unsynced {
		unix.Close(fd)
		delete(s.unsynced, start)
	}
	var size int64
	for _, g := range s.segs {
		size += g.size
	}
	s.segs = nil
	s.mu.Unlock()
	if err := os.RemoveAll(s.dir); err != nil {
		s.d.logf("terminal %q: removing its journal on disk: %v", s.meta.ID, err)
	}
	s.d.mu.Lock()
	delete(s.d.stores, s)
	s.d.mu.Unlock()
	s.d.used.Add(-size)
}

func (d *diskDir) addUsed(n int64) { d.used.Add(n) }

func (d *diskDir) overLimit() bool { return d.used.Load() > d.max }

// enforce keeps the directory within its bound: it removes dead
// terminals' files, oldest opened first, then exited terminals', then
// the oldest segments of live ones (never the one being appended to).
// A dead or exited terminal whose files go is dropped from the server by
// onDrop (its journal in memory went with its files).
func (d *diskDir) enforce() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.overLimit() {
		return
	}
	all := make([]*diskStore, 0, len(d.stores))
	for s := range d.stores {
		all = append(all, s)
	}
	rank := func(s *diskStore) int {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case s.dead:
			return 0
		case s.meta.Exited:
			return 1
		}
		return 2
	}
	ranks := map[*diskStore]int{}
	for _, s := range all {
		ranks[s] = rank(s)
	}
	sort.Slice(all, func(i, j int) bool {
		if ranks[all[i]] != ranks[all[j]] {
			return ranks[all[i]] < ranks[all[j]]
		}
		return all[i].meta.Opened.Before(all[j].meta.Opened)
	})
	for _, s := range all {
		if !d.overLimit() {
			return
		}
		if ranks[s] < 2 {
			d.mu.Unlock()
			d.logf("terminal %q: journal directory over its %d-byte bound: its files are removed", s.meta.ID, d.max)
			if d.onDrop != nil {
				d.onDrop(s)
			}
			s.remove()
			d.mu.Lock()
			continue
		}
		s.mu.Lock()
		for len(s.segs) > 1 && d.overLimit() {
			s.dropOldestLocked()
		}
		s.mu.Unlock()
	}
}

// recovered is a store a previous server left: its meta and the bytes
// its segments still hold, [start, start+len(data)) of its output (at
// most the journal's size, the newest).
type recovered struct {
	store *diskStore
	start uint64
	data  []byte
	// cut counts the bytes of torn or corrupt records cut off.
	cut int64
}

// recover reads every store in the directory. Each is opened again for
// the bound's sake, appended to by nobody. A store whose meta.json
// cannot be read is removed: without it nothing can be served.
func (d *diskDir) recover(markDead bool) []recovered {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		d.logf("journal directory %s: %v", d.path, err)
		return nil
	}
	var out []recovered
	for _, e := range ents {
		if e.Type()&os.ModeType != os.ModeDir {
			continue // a symlink or a file is nothing of ours
		}
		dir := filepath.Join(d.path, e.Name())
		if !journalDirName(e.Name()) {
			// Not a name create gives: whatever it is, it is not ours
			// to judge, let alone delete (DIR/NAME may be a directory
			// the user already had, with directories of their own).
			d.logf("journal directory: %s is not a terminal's journal; left as it is", dir)
			continue
		}
		r, err := d.recoverOne(dir, markDead)
		if err != nil {
			d.logf("journal directory: %s: %v; removed", dir, err)
			removeJournalFiles(dir)
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].store.meta.Opened.Before(out[j].store.meta.Opened) })
	return out
}

// journalDirName says whether name is one create gives a terminal's
// directory: its time of creation (UTC, 20060102T150405), '-' and 16
// lowercase hex digits.
func journalDirName(name string) bool {
	const stamp = len("20060102T150405")
	if len(name) != stamp+1+16 || name[stamp] != '-' || name[8] != 'T' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case i == 8 || i == stamp:
		case i < stamp && '0' <= c && c <= '9':
		case i > stamp && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// removeJournalFiles removes what a store writes in dir (its meta.json,
// the one being replaced, its count and its segments), then dir if
// nothing else is left in it: a directory that failed recovery is
// removed without deleting anything the server did not make.
func removeJournalFiles(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if n == diskMetaName || n == diskMetaName+".new" || n == diskCounterName || strings.HasSuffix(n, diskSegSuffix) {
			os.Remove(filepath.Join(dir, n)) // a directory by that name stays
		}
	}
	os.Remove(dir) // only if empty now
}

func readFileNoFollow(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if err := ownFile(fd, path); err != nil {
		return nil, err
	}
	b := make([]byte, st.Size)
	n, err := f.ReadAt(b, 0)
	if err != nil && n < len(b) {
		return nil, err
	}
	return b[:n], nil
}

func (d *diskDir) recoverOne(dir string, markDead bool) (recovered, error) {
	var r recovered
	mb, err := readFileNoFollow(filepath.Join(dir, diskMetaName))
	if err != nil {
		return r, fmt.Errorf("meta: %w", err)
	}
	s := &diskStore{d: d, dir: dir, fd: -1}
	if err := json.Unmarshal(mb, &s.meta); err != nil || s.meta.Version != 1 || s.meta.Journal <= 0 {
		return r, fmt.Errorf("meta: not a journal's meta.json (version 1)")
	}
	os.Remove(filepath.Join(dir, diskMetaName+".new"))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return r, err
	}
	var starts []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), diskSegSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		starts = append(starts, n)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	j := newJournal(s.meta.Journal)
	first := true
	// cutFrom removes the segments from the i-th on: what follows a gap
	// or a torn record is not served, so that what is served is a prefix.
	cutFrom := func(i int) {
		for _, later := range starts[i:] {
			if st, err := os.Lstat(s.segPath(diskSeg{start: later})); err == nil {
				r.cut += st.Size()
			}
			os.Remove(s.segPath(diskSeg{start: later}))
		}
	}
	for i, start := range starts {
		g := diskSeg{start: start}
		path := s.segPath(g)
		if !first && start != s.end {
			// A gap: a segment ends short of where the next begins.
			// Only a power loss makes one (the oldest segments go
			// first, and a finished segment is fsync'd with the next
			// one, not before it is begun): the records up to it are
			// served, those after it are cut off like a torn record's.
			cutFrom(i)
			break
		}
		if first {
			j.start, j.end, s.end = start, start, start
			first = false
		}
		b, err := readFileNoFollow(path)
		if err != nil {
			return r, err
		}
		good := 0
		for good < len(b) {
			p, ok := parseRecord(b[good:])
			if !ok {
				break
			}
			j.append(p)
			g.n += int64(len(p))
			good += diskRecordHeader + len(p)
		}
		if good < len(b) {
			// A torn or corrupt record: it and everything after it in
			// this segment and in later ones is cut off, so that what is
			// served is a prefix of what was written.
			r.cut += int64(len(b) - good)
			if err := os.Truncate(path, int64(good)); err != nil {
				return r, err
			}
			cutFrom(i + 1)
		}
		g.size = int64(good)
		s.segs = append(s.segs, g)
		s.kept += g.n
		s.end += uint64(g.n)
		if good < len(b) {
			break
		}
	}
	if first {
		j.start, j.end = 0, 0
	}
	if b, err := readFileNoFollow(filepath.Join(dir, diskCounterName)); err == nil && len(b) >= 8 {
		// Absent in the files of older servers: nothing is counted.
		if n := binary.NativeEndian.Uint64(b); n > s.end {
			s.crashLost = n - s.end
		}
	}
	if markDead && !s.meta.Dead {
		s.meta.Dead = true
		if err := s.writeMeta(); err != nil {
			// A full disk, say: the terminal is dead all the same, and
			// the next server finds it so (its server is gone too).
			d.logf("terminal %q: %v (it is dead all the same)", s.meta.ID, err)
		}
	}
	d.mu.Lock()
	d.stores[s] = struct{}{}
	d.mu.Unlock()
	for _, g := range s.segs {
		d.used.Add(g.size)
	}
	s.dead = s.meta.Dead
	r.store, r.start, r.data = s, j.start, j.bytes()
	return r, nil
}

// parseRecord returns the payload of the record p begins with, if it is
// whole and its checksum matches.
func parseRecord(p []byte) ([]byte, bool) {
	if len(p) < diskRecordHeader {
		return nil, false
	}
	n := binary.LittleEndian.Uint32(p)
	if n == 0 || n > diskRecordMax || len(p) < diskRecordHeader+int(n) {
		return nil, false
	}
	crc := crc32.Update(0, castagnoli, p[0:4])
	if crc32.Update(crc, castagnoli, p[diskRecordHeader:diskRecordHeader+int(n)]) != binary.LittleEndian.Uint32(p[4:]) {
		return nil, false
	}
	return p[diskRecordHeader : diskRecordHeader+int(n)], true
}

// reopen makes a recovered store of a terminal that still runs (handed
// over by a live upgrade) the one its reader appends to again.
func (s *diskStore) reopen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.mapCounter(s.end, false); err != nil {
		// An older server's store, or a damaged count: a new one.
		if err := s.mapCounter(s.end, true); err != nil {
			return err
		}
	}
	if len(s.segs) == 0 {
		return nil // the next append starts a segment
	}
	fd, err := unix.Open(s.segPath(s.segs[len(s.segs)-1]), unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("journal segment: %w", err)
	}
	if err := ownFile(fd, s.segPath(s.segs[len(s.segs)-1])); err != nil {
		unix.Close(fd)
		return err
	}
	s.fd = fd
	return nil
}

// copyMeta returns the store's meta.
func (s *diskStore) copyMeta() diskMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta
}
