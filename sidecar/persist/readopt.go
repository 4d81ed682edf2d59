//go:build unix

package persist

import (
	"encoding/json"
	"slices"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// Re-adoption serves hosts written for the plain sidecar, which know no
// ATTACH: they reopen the ids they used before (t1, t2, ...) and, with
// the terminals of their previous run still there, detached, would get
// "terminal id already exists". A connection that asked for it (its
// HELLO lists proto.FeatureReadopt; the bridge sends that for --readopt)
// is given such a terminal instead: OPENED with its pid, a repaint of its
// screen and scrollback as plain OUTPUT (the host's emulator redraws, as
// a tmux client does on attach), then its live output, and its EXIT if
// it has ended. The OPEN's size is applied as a RESIZE, its credit and
// orphanMs replace the terminal's; its command, journal and detached
// mode are the terminal's own.
//
// A dead terminal (its server died, and --journal-dir kept it) is not
// handed over so: its program is started again by the OPEN, as REVIVE
// starts it, with its old screen first (revivableLocked).
//
// That is for an OPEN of the same program (command and arguments, in the
// same working directory): one that names another program, or the same
// one elsewhere, wants that program, and the detached
// terminal under its id, which no host could reach again, is replaced:
// closed as CLOSE closes it, and its id given to the new one at once. So
// is a terminal that is being closed (a CLOSE before its host went) or
// that the orphan bound closed: the host wants a terminal to work in,
// and that one's end was not its program's doing.

// readopt gives c the terminal t, which an OPEN of c named, if nobody
// holds it; it reports whether it did (if not, the OPEN is refused as
// before).
func (s *Server) readopt(c *conn, t *term, o proto.Open, x proto.OpenPersist) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holder != nil || t.life == engine.Gone || t.end == exitWritten {
		return false
	}
	t.removeViewerLocked(c, "") // as an ATTACH by a viewer does
	t.watchDetachedLocked(c)
	gen := t.holdLocked(c, engine.NewCredit(o.Credit), false)
	t.adoptedLocked()
	// As its credit: an OPEN that names no orphanMs asks for the
	// server's default, whatever the OPEN before it asked.
	t.orphan.ms = x.OrphanMs
	t.queueCtlLocked(c, proto.TypeOpened, proto.Opened{TerminalID: t.id, PID: t.pid, Features: proto.PersistFeatures, Readopted: true, HoldGen: gen})
	// The repaint stands for everything up to the journal's end; live
	// output goes on from there.
	t.ctl = append(t.ctl, t.repaintCtlLocked(c, int(o.Cols)))
	t.sent = t.j.end
	t.acked = t.sent
	t.answers.attached(t.sent) // a holder answers from now on; nothing is replayed
	if t.life.Running() && (o.Cols != t.cols || o.Rows != t.rows) {
		// After the repaint was rendered at the old size: the program
		// redraws for the new one, as after any RESIZE.
		if err := t.proc.Resize(int(o.Cols), int(o.Rows)); err != nil {
			s.logf("terminal %q: resize: %v", t.id, err)
		}
		// Everything a RESIZE changes: the mode tracker follows the
		// cursor at this width (a tab stop or a saved cursor past the
		// old one is restored where it was set), and a REVIVE after a
		// crash starts at it.
		t.cols, t.rows = o.Cols, o.Rows
		t.vt.Resize(sizeOr(o.Cols, o.Rows))
		t.disk.resized(o.Cols, o.Rows)
	}
	s.logf("terminal %q (pid %d): re-adopted by an OPEN", t.id, t.pid)
	t.broadcastLocked()
	return true
}

// revivableLocked returns the dead terminal under o's id (its server
// died; --journal-dir kept it) if nobody holds it and it ran the program
// o names: an OPEN that asked for re-adoption starts that program again
// in its place, as REVIVE does, its old screen first, with its journal's
// size and mode (an OPEN of any other connection, or of another
// program, gets a new terminal, as before). Called with s.mu held.
func (s *Server) revivableLocked(o proto.Open) *term {
	t := s.terms[o.TerminalID]
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.dead || (t.holder != nil && t.end != exitWritten) || t.disk == nil || !sameProgram(t, o) {
		return nil
	}
	return t
}

// replaceLocked frees o's id, for a connection that asked for
// re-adoption, if a terminal nobody holds has it and runs another
// program than o names: that terminal is closed (SIGHUP, SIGKILL after
// the grace period) and forgotten once reaped, its EXIT unsent. Called
// with s.mu held.
func (s *Server) replaceLocked(o proto.Open) {
	t := s.terms[o.TerminalID]
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holder != nil || t.life == engine.Gone || t.end == exitWritten {
		return
	}
	if sameProgram(t, o) && t.life != engine.Closing && !t.orphan.closed {
		return
	}
	delete(s.terms, t.id)
	s.reserved -= int64(t.quota)
	if t.life.Running() {
		t.closeLocked()
	}
	s.logf("terminal %q (pid %d): replaced by an OPEN of %s (%s)", t.id, t.pid, o.Cmd,
		map[bool]string{true: "it was closing or closed", false: "another program"}[sameProgram(t, o)])
	go func() {
		<-t.reaped
		s.remove(t) // no longer under its id: only its pump ends
	}()
}

// launchSpec is what of an OPEN, besides the command and arguments,
// makes the program it starts the one a later OPEN names: its working
// directory (the OPEN's, or its bridge's). Not the environment: a host
// written for node-pty sends its whole environment in every OPEN (the
// npm package does), and that differs from one run of a host to the
// next in ways that make no other program (a per-process socket, SHLVL);
// compared, it would replace, that is close, the very terminals
// re-adoption is for.
type launchSpec struct {
	Cwd string `json:"cwd,omitempty"`
}

func launchOf(o proto.Open) *launchSpec {
	l := &launchSpec{}
	if o.Cwd != nil {
		l.Cwd = *o.Cwd
	}
	return l
}

// sameProgram reports whether o names the program t runs: the same
// command and arguments, started in the same directory (where t's is
// known).
func sameProgram(t *term, o proto.Open) bool {
	if t.cmd != o.Cmd || !slices.Equal(t.args, o.Args) {
		return false
	}
	return t.launch == nil || *t.launch == *launchOf(o)
}

// repaintCtlLocked is the repaint of a re-adoption: the SNAPSHOT a lossy
// ATTACH gets, rendered by the pump without t.mu, sent as OUTPUT frames
// to a host that knows no SNAPSHOT. A host with credit grants it for
// those bytes too, which are not the journal's: they are owed (see
// readoptDebt). hostCols is the width of the host's emulator: its OPEN's.
func (t *term) repaintCtlLocked(c *conn, hostCols int) ctlFrame {
	st := t.snapshotTailLocked()
	st.hostCols = hostCols
	var n int
	return ctlFrame{to: c,
		render: func() []byte {
			b, m := repaintOutput(st.frame(), t.id)
			n = m
			return b
		},
		release: func() {
			t.unpinLocked(st.from)
			if t.holder == c && t.credit.Limited() {
				t.debt = readoptDebt{to: c, n: uint64(n)}
			}
		}}
}

// repaintOutput turns a SNAPSHOT frame into OUTPUT frames carrying its
// data, and says how many bytes of output they carry. Anything else (the
// ERROR sent instead of a repaint too large for a frame) is passed on.
func repaintOutput(snap []byte, id string) ([]byte, int) {
	if len(snap) < 5 || proto.Type(snap[4]) != proto.TypeSnapshot {
		return snap, 0
	}
	var body proto.Snapshot
	if err := json.Unmarshal(snap[5:], &body); err != nil {
		// Our own rendering: cannot happen; nothing is better than a
		// frame the host would take for a corrupt stream.
		return nil, 0
	}
	data := []byte(body.Data)
	room := engine.OutputRoom(proto.DataHeaderSize(len(id)))
	var out []byte
	for rest := data; len(rest) > 0; {
		k := min(len(rest), room)
		out = proto.AppendDataFrame(out, proto.TypeOutput, id, rest[:k])
		rest = rest[k:]
	}
	return out, len(data)
}

// readoptDebt is the repaint a re-adopting host was sent outside its
// credit: the CREDIT it grants for those bytes pays the debt first, so
// that neither its credit window nor what it acknowledged of the journal
// (park mode) counts them. Sent outside the credit, the repaint may
// exceed the window by its size once; a host written for the plain
// sidecar buffers what it is sent.
type readoptDebt struct {
	to *conn
	n  uint64
}

// payDebtLocked takes what c owes out of a grant of n bytes and returns
// the rest, which counts as credit and as acknowledged output.
func (t *term) payDebtLocked(c *conn, n uint64) uint64 {
	if t.debt.to != c || t.debt.n == 0 {
		return n
	}
	paid := min(n, t.debt.n)
	t.debt.n -= paid
	return n - paid
}
