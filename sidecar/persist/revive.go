//go:build unix

package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/screen/vtstate"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// Dead terminals: what a server that died left in --journal-dir. The next
// server on the same directory lists each as dead (exited, no child);
// ATTACH replays what was kept and ends with an EXIT marked dead, and
// REVIVE starts its program again under the same id, the old screen
// drawn first. See diskjournal.go for what is kept.

// UseJournalDir opens Options.JournalDir (if set) for s. A server that
// starts afresh takes every terminal it finds there as dead; one that
// took over a live upgrade's state (resumed) finds the files of its own
// terminals again and goes on writing them, and takes the rest as dead.
// Called once, before Serve.
func (s *Server) UseJournalDir(resumed bool) error {
	if s.opts.JournalDir == "" {
		return nil
	}
	if s.disk == nil {
		// Resume opened it already, to give each terminal its files
		// back before its reader starts (resumeDisk).
		if err := s.openDisk(!resumed); err != nil {
			return err
		}
	}
	dead := 0
	left := s.recovered
	s.recovered = nil
	for _, r := range left {
		if resumed {
			// A store of no terminal handed over: its server died
			// before the upgrade's; it is dead now if it was not then.
			r.store.mu.Lock()
			r.store.meta.Dead, r.store.dead = true, true
			r.store.writeMeta()
			r.store.mu.Unlock()
		}
		if s.addDead(r) {
			dead++
		}
	}
	s.logf("journal directory %s: %d dead terminals recovered", s.disk.path, dead)
	return nil
}

// openDisk opens the journal directory and reads what is in it into
// s.recovered, marking it dead if markDead.
func (s *Server) openDisk(markDead bool) error {
	every := s.opts.JournalSync
	if every == 0 {
		every = DefaultJournalSync
	}
	d, err := openDiskDir(s.opts.JournalDir, s.opts.Name, s.opts.JournalDirMax, every, s.logf)
	if err != nil {
		return err
	}
	d.onDrop = s.diskDropped
	s.disk = d
	s.recovered = d.recover(markDead)
	return nil
}

// resumeDisk opens the journal directory for Resume, before any
// terminal is restored (an error is left for UseJournalDir to report).
func (s *Server) resumeDisk() {
	if s.opts.JournalDir != "" && s.disk == nil {
		if err := s.openDisk(false); err != nil {
			s.disk = nil
		}
	}
}

// adoptDisk gives the handed-over t, before its reader starts, the files
// that are its own (same id and pid) from s.recovered.
func (s *Server) adoptDisk(t *term) {
	for i, r := range s.recovered {
		if s.adoptStore(t, r) {
			s.recovered = append(s.recovered[:i], s.recovered[i+1:]...)
			return
		}
	}
}

// adoptStore gives r's store to t if it is t's.
func (s *Server) adoptStore(t *term, r recovered) bool {
	m := r.store.copyMeta()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id != m.ID || t.pid != m.PID || t.disk != nil {
		return false
	}
	if m.Dead {
		t.dead, t.exit.Dead = true, true
	} else if r.store.end != t.j.end {
		// The reader writes the disk before the journal: they cannot
		// differ, unless a write failed. The disk is written anew from
		// the journal the upgrade handed over.
		s.logf("terminal %q: journal on disk ends at %d, the journal at %d: written again", m.ID, r.store.end, t.j.end)
		r.store.remove()
		t.disk, t.diskLater = s.diskCreateMeta(m, t.j.start, t.j.bytes())
		return true
	} else if err := r.store.reopen(); err != nil {
		s.logf("terminal %q: %v", m.ID, err)
	}
	t.disk = r.store
	return true
}

// diskLater is a terminal's journal on disk that could not be made:
// what to make, when to try again (term.healDiskLocked), and why it
// could not.
type diskLater struct {
	meta diskMeta
	at   time.Time
	why  string
}

func (l *diskLater) due() bool { return l != nil && !time.Now().Before(l.at) }

// diskCreate starts the journal on disk of a terminal just opened, with
// seed as its first bytes. It is nil without a journal directory, or if
// it cannot be made: the terminal runs anyway, the log says why, and
// later says what to make again (and why, for LIST). base is the
// environment o.Env was merged over (nil: the server's).
func (s *Server) diskCreate(o proto.Open, base []string, journal int, park bool, pid int, seed []byte) (*diskStore, *diskLater) {
	if s.disk == nil {
		return nil, nil
	}
	if base == nil {
		base = os.Environ()
	}
	m := diskMeta{ID: o.TerminalID, Cmd: o.Cmd, Args: o.Args, Cwd: o.Cwd, Env: o.Env, BaseEnv: base, UTF8: o.UTF8,
		NodePtyTermios: o.NodePtyTermios, Cols: o.Cols, Rows: o.Rows, Journal: journal, Park: park, PID: pid, Opened: time.Now().UTC()}
	return s.diskCreateMeta(m, 0, seed)
}

func (s *Server) diskCreateMeta(m diskMeta, start uint64, seed []byte) (*diskStore, *diskLater) {
	m.Dead, m.Exited, m.ExitCode, m.Signal = false, false, nil, ""
	st, err := s.disk.create(m, start)
	if err != nil {
		s.logf("terminal %q: no journal on disk: %v", m.ID, err)
		return nil, &diskLater{meta: m, at: time.Now().Add(diskHealEvery), why: err.Error()}
	}
	st.appendAll(seed, start)
	return st, nil
}

// healDiskLocked replaces the terminal's journal on disk, which a failed
// write stopped (a full disk) or which could not be made, by a new one
// holding the whole journal, if the disk takes it now; else it tries
// again diskHealEvery later. The reader calls it, between reads: nothing
// else appends meanwhile, and reading stays set so that a live upgrade's
// freeze waits for it. The old store's files go once the new one holds
// everything.
func (t *term) healDiskLocked() {
	old := t.disk
	later := func() {
		if old != nil {
			old.postponeHeal()
		} else {
			t.diskLater.at = time.Now().Add(diskHealEvery)
		}
	}
	if free, ok := freeBytes(t.s.disk.path); ok && free < int64(t.j.end-t.j.start)+diskHealSpare {
		later()
		return
	}
	var m diskMeta
	if old != nil {
		m = old.copyMeta()
	} else {
		m = t.diskLater.meta
	}
	m.Cols, m.Rows = t.cols, t.rows
	start, seed := t.j.start, t.j.bytes()
	t.reading = true
	t.mu.Unlock()
	m.Dead, m.Exited, m.ExitCode, m.Signal = false, false, nil, ""
	ns, err := t.s.disk.create(m, start)
	if err == nil {
		ns.mu.Lock()
		ns.quiet = true
		ns.mu.Unlock()
		ns.appendAll(seed, start)
		if p := ns.problem(); p != "" {
			ns.remove()
			err = errors.New(p)
		}
		ns.mu.Lock()
		ns.quiet = false
		ns.mu.Unlock()
	}
	if err == nil {
		old.remove()
		t.logf("journal on disk again (%s): the whole journal, from offset %d", ns.dir, start)
	}
	t.mu.Lock()
	if err == nil {
		t.disk, t.diskLater = ns, nil
		if t.cols != m.Cols || t.rows != m.Rows {
			ns.resized(t.cols, t.rows) // a RESIZE came meanwhile
		}
	} else {
		later() // quietly: the log said it stopped
	}
	t.reading = false
	t.broadcastLocked()
}

// diskDropped drops the terminal whose files the directory's bound
// removes.
func (s *Server) diskDropped(st *diskStore) {
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		mine := t.disk == st && (t.dead || t.exitedLocked())
		t.mu.Unlock()
		if mine {
			s.remove(t)
		}
	}
}

// addDead makes a dead terminal of r: exited, with no child, its journal
// what the files kept. It is kept as an exited terminal is
// (--keep-exited from now). Reports whether it was added.
func (s *Server) addDead(r recovered) bool {
	m := r.store.copyMeta()
	t := &term{id: m.ID, s: s, pid: m.PID, cmd: m.Cmd, args: m.Args, launch: launchOf(proto.Open{Cwd: m.Cwd}), park: m.Park, quota: m.Journal,
		readDone: make(chan struct{}), reaped: make(chan struct{}), j: newJournal(m.Journal),
		cols: m.Cols, rows: m.Rows, life: engine.Reaped, readEnded: true,
		input: engine.NewInputQueue(&s.input), disk: r.store, dead: true,
		exit: proto.Exit{TerminalID: m.ID, Dead: true, ExitCode: m.ExitCode, Signal: m.Signal}}
	t.initConds()
	t.j.start, t.j.end = r.start, r.start
	t.j.append(r.data)
	// The modes a SNAPSHOT restores, from what was kept (modes.go).
	cols, rows := sizeOr(m.Cols, m.Rows)
	t.vt = vtstate.Resume(vtstate.Initial(cols, rows), r.start, checkpointEvery(m.Journal), nil)
	t.vt.Write(r.data)
	close(t.readDone)
	close(t.reaped)
	t.input.Discard()
	s.mu.Lock()
	if old := s.terms[m.ID]; old != nil {
		if !old.dead {
			s.mu.Unlock()
			s.logf("terminal %q: a dead one of the same id is in the journal directory: its files are removed", m.ID)
			r.store.remove()
			return false
		}
		// Two dead terminals of one id (the id was opened again before
		// the crash): the newer one, recovered later, stays.
		s.dropLocked(old)
	}
	if s.reserved+int64(t.quota) > s.opts.Total {
		s.mu.Unlock()
		s.logf("terminal %q: dead, but its journal of %d bytes is past --journal-total: its files are removed", m.ID, t.quota)
		r.store.remove()
		return false
	}
	s.terms[m.ID] = t
	s.reserved += int64(t.quota)
	s.mu.Unlock()
	if r.cut > 0 {
		s.logf("terminal %q: %d bytes of torn or corrupt records cut off its journal on disk", m.ID, r.cut)
	}
	go t.pump()
	s.keepExited(t)
	return true
}

// crashLostLocked is what a dead terminal's server lost of it in the
// crash (diskStore.crashLost), 0 for any other terminal.
func (t *term) crashLostLocked() uint64 {
	if !t.dead || t.disk == nil {
		return 0
	}
	return t.disk.crashLost
}

// revive handles REVIVE: the dead terminal's program is started again,
// with the command, args, cwd, env and size it had, under the same id;
// the new terminal's first OUTPUT is the old one's screen (a repaint of
// its journal's tail), after OPENED. c holds the new terminal. The dead
// one is dropped once the new one runs; if the program cannot be
// started, it stays and c gets an ERROR.
func (s *Server) revive(c *conn, r proto.Revive) {
	id := r.TerminalID
	t := s.lookup(id)
	if t == nil || !t.dead {
		c.errorf(id, "REVIVE refused: no dead terminal %q on this server (LIST marks dead terminals \"dead\": true)", id)
		return
	}
	t.mu.Lock()
	if h := t.holder; h != nil && h != c && t.end != exitWritten {
		// (A holder that was written its EXIT has finished with it.)
		t.mu.Unlock()
		c.errorf(id, "REVIVE refused: another connection holds dead terminal %q", id)
		return
	}
	t.mu.Unlock()
	m := t.disk.copyMeta()
	o := proto.Open{TerminalID: id, Cols: m.Cols, Rows: m.Rows, Cmd: m.Cmd, Args: m.Args, Cwd: m.Cwd,
		Env: m.Env, Credit: r.Credit, UTF8: m.UTF8,
		NodePtyTermios: m.NodePtyTermios}
	s.startAgain(c, t, o, restart{base: m.BaseEnv, park: m.Park, quota: m.Journal, frame: "REVIVE"})
}

// restart is what startAgain needs besides the OPEN: the environment its
// env goes over, the new terminal's journal and orphan bound, and the
// request an ERROR names.
type restart struct {
	base     []string
	park     bool
	quota    int
	orphanMs int64
	frame    string
}

// startAgain starts o's program in a new terminal that takes dead
// terminal t's place under its id, held by c: its first OUTPUT, after
// OPENED, is t's screen. t stays if the program cannot be started.
func (s *Server) startAgain(c *conn, t *term, o proto.Open, r restart) {
	id := o.TerminalID
	t.mu.Lock()
	st := t.snapshotTailLocked()
	t.mu.Unlock()
	// The old screen is drawn at the dead terminal's size, on the host's
	// emulator at the new one's (a re-adopting OPEN's size may differ).
	st.hostCols = int(o.Cols)
	screen := renderScreen(st)
	t.mu.Lock()
	t.unpinLocked(st.from)
	t.mu.Unlock()
	cfg := ptyhost.Config{Cmd: o.Cmd, Args: o.Args, Env: o.Env, BaseEnv: r.base, Cols: int(o.Cols), Rows: int(o.Rows), UTF8: o.UTF8,
		NodePtyTermios: o.NodePtyTermios, NoParentDeathSignal: true}
	if o.Cwd != nil {
		cfg.Dir = *o.Cwd
	}
	proc, err := ptyhost.Start(cfg)
	if err != nil {
		c.errorf(id, "%s refused: starting %s again: %v", r.frame, o.Cmd, err)
		return
	}
	gen := s.nextHoldGen()
	nt := &term{id: id, s: s, cmd: o.Cmd, args: o.Args, launch: launchOf(o), park: r.park, quota: r.quota,
		readDone: make(chan struct{}), reaped: make(chan struct{}), j: newJournal(r.quota),
		holder: c, holdGen: gen, holdRoot: gen, credit: engine.NewCredit(o.Credit), cols: o.Cols, rows: o.Rows, life: engine.Spawning,
		proc: proc, pid: proc.Pid(), vt: newTracker(o.Cols, o.Rows, r.quota), orphan: orphanClock{ms: r.orphanMs}}
	nt.input = engine.NewInputQueue(&s.input)
	nt.initConds()
	nt.j.append(screen)
	nt.trackLocked(screen) // not shared yet
	// The new terminal's files, which begin with the old screen, are
	// made before the dead one's go (with it, below): a crash between
	// the two leaves both, and the next server keeps the newer.
	disk, later := s.diskCreate(o, r.base, r.quota, r.park, nt.pid, screen)
	s.mu.Lock()
	if s.stopping || s.terms[id] != t {
		s.mu.Unlock()
		disk.remove()
		engine.Kill(proc)
		proc.WaitExit()
		proc.Reap()
		proc.Close()
		c.errorf(id, "%s refused: terminal %q changed meanwhile (or the server is stopping)", r.frame, id)
		return
	}
	s.dropLocked(t) // its files go with it
	s.terms[id] = nt
	s.reserved += int64(nt.quota)
	s.mu.Unlock()
	s.logf("terminal %q revived (%s): %s, pid %d", id, r.frame, o.Cmd, nt.pid)
	s.watch(proc)
	nt.mu.Lock()
	nt.disk, nt.diskLater = disk, later
	nt.enterLocked(engine.Live)
	nt.mu.Unlock()
	nt.queueCtl(c, proto.TypeOpened, proto.Opened{TerminalID: id, PID: nt.pid, Features: proto.PersistFeatures, HoldGen: gen})
	nt.start()
}

// renderScreen is the repaint of st (the SNAPSHOT's data), then the
// terminal's modes back at their defaults (the main screen shown, no
// mouse reporting, no bracketed paste...: vtstate.AppendDefaults) and
// its tab stops, and the cursor on a new line, where the new program's output begins. The
// new program is most often a shell, which the dead one's modes (a vim
// it ran, say) would leave in the alternate screen with the mouse
// reporting into it.
func renderScreen(st snapshotTail) []byte {
	f, err := proto.NewReader(bytes.NewReader(st.frame())).ReadFrame()
	if err != nil || f.Type != proto.TypeSnapshot {
		return nil
	}
	var sn proto.Snapshot
	if json.Unmarshal(f.Body, &sn) != nil || sn.Data == "" {
		return nil
	}
	b := append([]byte(sn.Data), "\x1b[0m"...)
	b = st.final.AppendDefaults(b)
	if st.final.TabsChanged {
		// The default stops again, every 8 columns from the first
		// (xterm.js has no DECST8C): the cursor's column is left at
		// the last, and the line ends below.
		b = append(b, "\x1b[3g"...)
		for c := 0; c < max(st.cols, st.hostCols); c += 8 {
			b = append(b, "\x1b["...)
			b = strconv.AppendInt(b, int64(c+1), 10)
			b = append(b, "G\x1bH"...)
		}
	}
	return append(b, "\r\n"...)
}
