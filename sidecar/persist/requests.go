//go:build unix

package persist

import (
	"time"

	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// dispatch acts on one frame from c. Frames about a terminal that does
// not exist are dropped as the plain sidecar drops them, except the new
// frames, whose senders know to expect an answer; frames about a
// terminal another connection holds get an ERROR, since acting on them
// would let two hosts type into one shell.
func (s *Server) dispatch(c *conn, f proto.Frame) {
	m, err := proto.Decode(f)
	if err != nil {
		s.malformed(c, err.(*proto.DecodeError))
		return
	}
	switch m := m.(type) {
	case proto.OpenRequest:
		s.open(c, m)
	case proto.Input:
		if t := s.held(c, m.TerminalID, "INPUT"); t != nil {
			// The host's colours, from its replies; its replies to queries
			// the server answered while detached, taken out (answers.go).
			m.Data = t.answers.input(m.Data)
			if _, cut := c.inputCut[t]; cut {
				// An INPUT before it was dropped (the stream ended
				// while it waited): the child never gets input with a
				// hole in it.
				break
			}
			held := false
			stop := c.waits.begin(c, t)
			if stop == nil {
				break // taken over since held() looked
			}
			_, queued := t.input.PushWaitQueued(m.Data, t.readDone, stop, func(why string) {
				s.logf("INPUT for terminal %q waits: %s", m.TerminalID, why)
				// A CREDIT among the frames held back may be what the
				// child waits for: it is read and applied meanwhile
				// (lookahead.go).
				held = true
				c.ahead.WaitBegins()
			})
			c.waits.done()
			if held {
				c.ahead.WaitEnds()
			}
			if held && !queued {
				s.noteInputCut(c, t)
			}
		}
	case proto.Resize:
		if t := s.held(c, m.TerminalID, "RESIZE"); t != nil {
			t.ifRunning(func() {
				if err := t.proc.ResizePixels(int(m.Cols), int(m.Rows), int(m.PixelWidth), int(m.PixelHeight)); err != nil {
					s.logf("terminal %q: resize: %v", t.id, err)
				}
				t.cols, t.rows = m.Cols, m.Rows
				t.vt.Resize(sizeOr(m.Cols, m.Rows))
				t.disk.resized(m.Cols, m.Rows)
			})
		}
	case proto.Close:
		if t := s.held(c, m.TerminalID, "CLOSE"); t != nil {
			t.close()
		}
	case proto.Credit:
		if t := s.lookup(m.TerminalID); t != nil {
			s.credit(c, t, m.Bytes)
		}
	case proto.Signal:
		sig, _, err := signame.Parse(m.Signal)
		if err == nil {
			err = m.CheckTarget()
		}
		if err != nil {
			s.signalRefused(c, m.TerminalID, err)
			return
		}
		if t := s.held(c, m.TerminalID, "SIGNAL"); t != nil {
			t.ifRunning(func() {
				signal := t.proc.SignalForeground
				if m.Target == proto.SignalChild {
					signal = t.proc.Signal
				}
				if err := signal(sig); err != nil {
					s.logf("terminal %q: %v", t.id, err)
				}
			})
		}
	case proto.Foreground:
		if t := s.held(c, m.TerminalID, "FOREGROUND"); t != nil {
			info := proto.ForegroundInfo{TerminalID: t.id}
			if t.ifRunning(func() {
				pgrp, name, err := t.proc.ForegroundProcess()
				if err == nil || pgrp > 0 {
					info.PID, info.Process = pgrp, name
				}
			}) {
				t.queueCtl(c, proto.TypeForegroundInfo, info)
			}
		}
	case proto.Hello:
		s.logf("host %q speaks protocol %d", m.Version, m.Protocol)
		if m.Has(proto.FeatureReadopt) {
			c.readopt = true // for good: a host's own later HELLO does not undo its bridge's
		}
		if len(m.Env) > 0 {
			// The bridge's environment: its host's terminals start from it,
			// as they would under a plain sidecar the host had spawned. A
			// later HELLO without one (the host's own) leaves it.
			c.env = m.Env
		}
		if m.Cwd != "" {
			c.cwd = m.Cwd // likewise its working directory
		}
		s.helloReply(c)
	case proto.Ping:
		c.write(proto.PongFrame(m.Body))
	case proto.List:
		c.writeJSON(proto.TypeListed, s.list())
	case proto.Attach:
		if m.Mode == proto.AttachView {
			s.attachView(c, m)
		} else {
			s.attach(c, m)
		}
	case proto.Detach:
		if m.To != nil {
			s.handOver(c, m.TerminalID, *m.To)
		} else {
			s.detach(c, m.TerminalID)
		}
	case proto.Revive:
		s.revive(c, m)
	}
}

// malformed acts on a frame that could not be decoded: the frames whose
// senders expect an answer (OPEN, ATTACH, DETACH, STOP, and SIGNAL for a
// terminal c holds) get an ERROR, HELLO is answered anyway, the rest is
// logged as the plain sidecar logs it.
func (s *Server) malformed(c *conn, e *proto.DecodeError) {
	switch e.Type {
	case proto.TypeOpen:
		if !e.HasID {
			s.logf("OPEN without a recoverable terminalId dropped: %v", e)
			return
		}
		c.errorf(e.ID, "%s", e.Error())
	case proto.TypeInput:
		s.logf("INPUT: %v", e)
	case proto.TypeResize, proto.TypeClose, proto.TypeCredit, proto.TypeForeground:
		s.logf("%v", e)
	case proto.TypeSignal:
		s.signalRefused(c, e.ID, e)
	case proto.TypeHello:
		s.logf("%v (answering with our own)", e)
		s.helloReply(c)
	case proto.TypeAttach, proto.TypeDetach, proto.TypeRevive:
		c.errorf(e.ID, "%s", e.Error())
	case proto.TypeStop:
		// Not a STOP: every terminal goes on, and the sender, which
		// waits for the connection to close, learns why it does not.
		s.logf("%v (the server goes on)", e)
		c.errorf("", "%s", e.Error())
	}
}

// signalRefused tells c that a SIGNAL for a terminal it holds cannot be
// carried out.
func (s *Server) signalRefused(c *conn, id string, err error) {
	if t := s.held(c, id, "SIGNAL"); t != nil {
		t.queueCtl(c, proto.TypeError, proto.Error{TerminalID: t.id, Message: "SIGNAL: " + err.Error()})
	}
}

// helloReply answers HELLO like the plain sidecar, with persist among the
// features: a host that asks learns it reached a persistent one.
func (s *Server) helloReply(c *conn) {
	c.writeJSON(proto.TypeHelloReply, proto.SidecarHello(version.Version, proto.PersistHelloFeatures))
}

// held returns the terminal id if c holds it. A terminal that does not
// exist yields nil silently (the plain sidecar's rule); one c does not
// hold yields nil and an ERROR naming the frame.
func (s *Server) held(c *conn, id, frame string) *term {
	t := s.lookup(id)
	if t == nil {
		return nil
	}
	t.mu.Lock()
	h, finished, views := t.holder, t.end == exitWritten, t.views.find(c) != nil
	t.mu.Unlock()
	if finished {
		return nil // its EXIT was sent: as good as gone
	}
	if h != c {
		who := "no connection holds it (ATTACH it first)"
		if h != nil {
			who = "another connection holds it"
		}
		if views {
			who = `this connection only views it (ATTACH without "mode":"view" takes it over)`
		}
		c.errorf(id, "%s refused: terminal %q is not attached to this connection: %s", frame, id, who)
		return nil
	}
	return t
}

func (t *term) queueCtl(to *conn, typ proto.Type, v any) {
	t.mu.Lock()
	t.queueCtlLocked(to, typ, v)
	t.mu.Unlock()
}

func (s *Server) open(c *conn, m proto.OpenRequest) {
	o := m.Open
	if o.Cwd == nil && c.cwd != "" {
		// Where a plain sidecar spawned by the bridge's host would start
		// it; recorded as the OPEN's own, so that REVIVE starts there too.
		cwd := c.cwd
		o.Cwd = &cwd
	}
	x, err := m.Persist(MaxJournal)
	if err != nil {
		c.errorf(o.TerminalID, "%s", err.Error())
		return
	}
	size, park := s.opts.Journal, x.Park
	if x.Journal > 0 {
		size = int(x.Journal)
	}
	t := &term{id: o.TerminalID, s: s, cmd: o.Cmd, args: o.Args, launch: launchOf(o), park: park, quota: size,
		readDone: make(chan struct{}), reaped: make(chan struct{}), j: newJournal(size),
		vt: newTracker(o.Cols, o.Rows, size), holder: c, credit: engine.NewCredit(o.Credit), cols: o.Cols, rows: o.Rows, life: engine.Spawning,
		orphan: orphanClock{ms: x.OrphanMs}}
	t.input = engine.NewInputQueue(&s.input)
	t.initConds()
	s.mu.Lock()
	if c.readopt {
		if dead := s.revivableLocked(o); dead != nil {
			s.mu.Unlock()
			m := dead.disk.copyMeta()
			s.startAgain(c, dead, o, restart{base: c.env, park: m.Park, quota: m.Journal, orphanMs: x.OrphanMs, frame: "OPEN"})
			return
		}
		s.replaceLocked(o)
	}
	fits := s.makeRoomLocked(o.TerminalID, int64(size))
	switch {
	case s.stopping:
		s.mu.Unlock()
		c.errorf(o.TerminalID, "the persistent sidecar is stopping")
		return
	case s.terms[o.TerminalID] != nil:
		old := s.terms[o.TerminalID]
		s.mu.Unlock()
		if c.readopt && s.readopt(c, old, o, x) {
			return
		}
		// Behind what the terminal has queued for this connection
		// (its OPENED, if c opened it just now): a host that matches
		// answers by id must read its first OPEN's answer first.
		old.mu.Lock()
		if old.holder == c && old.end != exitWritten && old.life != engine.Gone { // its pump still writes to c
			old.queueCtlLocked(c, proto.TypeError, proto.Error{TerminalID: o.TerminalID, Message: "terminal id already exists"})
			old.mu.Unlock()
			return
		}
		old.mu.Unlock()
		c.errorf(o.TerminalID, "terminal id already exists")
		return
	case !fits:
		s.mu.Unlock()
		c.errorf(o.TerminalID, "journal of %d bytes refused: the server's terminals already reserve %d of its %d-byte total (--journal-total)", size, s.reserved, s.opts.Total)
		return
	}
	// Before it is published: from then on an ATTACH may take it over.
	gen := t.newHolderLocked() // not shared yet
	s.terms[o.TerminalID] = t
	s.reserved += int64(size)
	s.mu.Unlock()
	// No parent-death signal: it would fire at a live upgrade's execve
	// (see ptyhost.Config). The children get the PTY hangup if we die.
	cfg := ptyhost.Config{Cmd: o.Cmd, Args: o.Args, Env: o.Env, BaseEnv: c.env, Cols: int(o.Cols), Rows: int(o.Rows), UTF8: o.UTF8,
		NodePtyTermios: o.NodePtyTermios, NoParentDeathSignal: true}
	if o.Cwd != nil {
		cfg.Dir = *o.Cwd
	}
	// The spawn runs in the dispatch loop: it takes a few milliseconds,
	// and frames that follow the OPEN then find the child running.
	proc, err := ptyhost.Start(cfg)
	if err != nil {
		s.mu.Lock()
		delete(s.terms, o.TerminalID)
		s.reserved -= int64(size)
		s.mu.Unlock()
		c.errorf(o.TerminalID, "%s", err.Error())
		return
	}
	disk, later := s.diskCreate(o, c.env, size, park, proc.Pid(), nil)
	t.mu.Lock()
	t.proc, t.pid, t.disk, t.diskLater = proc, proc.Pid(), disk, later
	t.enterLocked(engine.Live)
	t.mu.Unlock()
	s.watch(proc)
	t.queueCtl(c, proto.TypeOpened, proto.Opened{TerminalID: t.id, PID: t.pid, Features: proto.PersistFeatures, HoldGen: gen})
	t.start()
}

// attach handles ATTACH: c takes the terminal over (its previous holder
// is told DETACHED), and the pump replays from the offset asked for.
func (s *Server) attach(c *conn, a proto.Attach) {
	id := a.TerminalID
	off, credit := a.Offset, engine.NewCredit(a.Credit)
	t := s.lookup(id)
	if t == nil {
		c.errorf(id, "ATTACH refused: no terminal %q on this server", id)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.life == engine.Gone {
		c.errorf(id, "ATTACH refused: no terminal %q on this server", id)
		return
	}
	if err := t.resumeRefusalLocked(a.Resume); err != nil {
		c.errorf(id, "%s", err.Error())
		return
	}
	if off > t.j.end {
		c.errorf(id, "ATTACH refused: offset %d is past the %d bytes terminal %q has produced", off, t.j.end, id)
		return
	}
	// A finished terminal (its EXIT was sent) is attached again by a
	// host that never read that EXIT: it is sent once more.
	t.end = unread
	// A viewer that takes the terminal over stops viewing it; the pump
	// waits for the frame it may be writing (pumpGatedLocked).
	t.removeViewerLocked(c, "")
	if old := t.holder; old != nil && old != c {
		t.queueCtlLocked(old, proto.TypeDetached, proto.Detached{TerminalID: id, Reason: "taken over by another connection"})
		t.watchTakeover(old, afterTakeover)
		old.waits.takenOver(t) // its INPUT waiting for room is dropped
	} else {
		t.watchDetachedLocked(c)
	}
	gen := t.holdLocked(c, credit, a.Resume != nil)
	var lost uint64
	if off < t.j.start {
		lost = t.j.start - off
	}
	t.queueCtlLocked(c, proto.TypeAttached, proto.Attached{TerminalID: id, Offset: off, Lost: lost, CrashLost: t.crashLostLocked(), HoldGen: gen})
	t.sent = off
	if lost > 0 {
		t.ctl = append(t.ctl, t.snapshotCtlLocked(c))
		t.sent = t.j.end
	}
	t.acked = t.sent
	t.answers.attached(t.sent) // the replay's queries, answered already
	t.broadcastLocked()
}

func (s *Server) detach(c *conn, id string) {
	t := s.lookup(id)
	if t == nil {
		c.errorf(id, "DETACH refused: no terminal %q on this server", id)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holder != c {
		if t.detachViewerLocked(c) {
			return // its goroutine writes the DETACHED
		}
		c.errorf(id, "DETACH refused: terminal %q is not attached to this connection", id)
		return
	}
	t.queueCtlLocked(c, proto.TypeDetached, proto.Detached{TerminalID: id, Reason: "detached as asked"})
	t.holder = nil
	s.orphanedLocked(t)
	if t.exitedLocked() && t.end == unread {
		s.keepExitedLocked(t, s.opts.KeepExited)
	}
}

// list describes every terminal for LISTED.
func (s *Server) list() proto.Listed {
	out := proto.Listed{Terminals: []proto.ListedTerminal{}}
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.end == exitWritten {
			t.mu.Unlock()
			continue
		}
		e := proto.ListedTerminal{TerminalID: t.id, PID: t.pid, Cmd: t.cmd, Args: t.args,
			Cols: t.cols, Rows: t.rows, Produced: t.j.end, Start: t.j.start,
			Attached: t.holder != nil, Detached: proto.DetachedRing, Exited: t.exitedLocked(), OrphanInMs: t.orphanInLocked(), Dead: t.dead,
			HoldGen: t.holdGen}
		if t.park {
			e.Detached = proto.DetachedPark
		}
		e.Viewers = t.listedViewersLocked()
		e.CrashLost = t.crashLostLocked()
		if t.disk != nil {
			e.JournalDirError = t.disk.problem()
		} else if t.diskLater != nil {
			e.JournalDirError = t.diskLater.why
		}
		if t.exitedLocked() {
			e.ExitCode, e.Signal = t.exit.ExitCode, t.exit.Signal
			if t.holder == nil && !t.keepAt.IsZero() {
				left := max(time.Until(t.keepAt).Milliseconds(), 0)
				e.DropInMs = &left
			}
		}
		// Sent SIGHUP by a CLOSE or the orphan bound, SIGKILL to come.
		e.Closing = t.life == engine.Closing
		t.mu.Unlock()
		out.Terminals = append(out.Terminals, e)
	}
	return out
}
