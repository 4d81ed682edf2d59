//go:build unix

package persist

import (
	"bytes"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/vtstate"
)

// Each terminal's output goes through a vtstate.Tracker as the reader
// commits it to the journal: it keeps the modes a SNAPSHOT restores (the
// alternate screen and where it was entered, cursor keys, keypad, mouse,
// bracketed paste, the scroll region, charsets, title, SGR...), which
// the journal's tail alone may no longer hold, and every so often a
// checkpoint of them, so that a snapshot's screen can be primed with the
// state where its tail begins. It skips text with bytes.IndexByte and
// parses only escape sequences, so that it costs the reader little
// (BenchmarkTrack in screen/vtstate against a plain copy).

// checkpointEvery is the checkpoint interval of a journal of limit bytes:
// about sixteen of them in a full journal, so that a tail starts at most
// a sixteenth of the journal before where it must.
func checkpointEvery(limit int) int { return min(max(limit/16, 4<<10), 1<<20) }

func newTracker(cols, rows uint16, journal int) *vtstate.Tracker {
	c, r := sizeOr(cols, rows)
	return vtstate.New(c, r, checkpointEvery(journal))
}

// sizeOr is the size, or 80x24 for a terminal opened without one.
func sizeOr(cols, rows uint16) (int, int) {
	c, r := int(cols), int(rows)
	if c == 0 {
		c = 80
	}
	if r == 0 {
		r = 24
	}
	return c, r
}

// trackLocked feeds the tracker what the reader just committed, and lets
// it forget checkpoints the journal no longer reaches.
func (t *term) trackLocked(b []byte) {
	t.vt.Write(b)
	t.vt.Forget(t.j.start)
}

// vtHandover is the tracker in the handover state (termState.VT): its
// state, the offset from which the journal is fed to it again (a
// sequence under way at the freeze), and its checkpoints. A state
// without it (from a binary before it) has the tracker rebuilt from the
// journal alone: modes set before the journal's start are lost then.
type vtHandover struct {
	State       vtstate.State        `json:"state"`
	Pending     uint64               `json:"pending"`
	Checkpoints []vtstate.Checkpoint `json:"checkpoints,omitempty"`
}

func (t *term) vtHandoverLocked() *vtHandover {
	return &vtHandover{State: t.vt.State(), Pending: t.vt.Pending(), Checkpoints: t.vt.Checkpoints()}
}

// restoreTracker makes the tracker of the handed-over terminal ts, whose
// journal holds journal.
func (ts termState) restoreTracker(journal []byte) *vtstate.Tracker {
	every := checkpointEvery(ts.Quota)
	var vt *vtstate.Tracker
	from := ts.Start
	if h := ts.VT; h != nil && h.Pending >= ts.Start && h.Pending <= ts.End {
		vt = vtstate.Resume(h.State, h.Pending, every, h.Checkpoints)
		from = h.Pending
	} else {
		c, r := sizeOr(ts.Cols, ts.Rows)
		vt = vtstate.Resume(vtstate.Initial(c, r), ts.Start, every, nil)
	}
	vt.Write(journal[from-ts.Start:])
	return vt
}

// snapshotPlan is where a snapshot's tail begins and the state there.
// The tail that screen and scrollback need begins at from; it reaches
// further back for the main screen's content when the alternate screen
// is shown (to where it was entered, and the screen's worth of lines
// before) and for tab stops set since the last reset, as far as the
// journal and the snapshot's input bound (maxInput bytes) allow. It then
// begins at the checkpoint at or before that point, whose state primes
// the screen (modes.go's tracker: modes, region, charsets, pen, tab
// stops, saved cursors and the cursor); or, when the journal no longer
// holds one there (the tail reaches its start, where a checkpoint
// seldom is), at the first checkpoint after the journal's start: the
// bytes before it are left out rather than drawn without their modes, or
// from the middle of a sequence or a character.
//
// shown is where the lines the snapshot shows begin: the bytes between
// start and shown only bring the screen to the state it was in there
// (their lines are older than the scrollback kept), so a renderer parses
// them without rendering what they scroll off.
func (t *term) snapshotPlanLocked(from uint64, rows, maxInput int) (start, shown uint64, prime *vtstate.State) {
	st := t.vt.State()
	want := from
	lo := t.j.start
	if t.j.end-lo > uint64(maxInput) {
		lo = t.j.end - uint64(maxInput)
	}
	if st.Alt && st.AltAt >= lo && st.AltAt < want {
		want = max(t.j.linesBefore(st.AltAt, rows, lo), lo)
	}
	if st.TabsChanged && !st.TabsKnown && st.TabsAt >= lo && st.TabsAt < want {
		want = st.TabsAt
	}
	for _, w := range []uint64{want, from} {
		if cp, ok := t.vt.Checkpoint(w); ok && cp.Off >= lo {
			s := cp.State
			return cp.Off, max(cp.Off, want), &s
		}
	}
	if cp, ok := t.vt.CheckpointFrom(lo); ok && cp.Off <= t.j.end {
		s := cp.State
		return cp.Off, cp.Off, &s
	}
	// No checkpoint in the journal (one smaller than the interval, or
	// a sequence longer than it): the tail as it is, on a screen that
	// shows the alternate screen if it was entered before the tail.
	if st.Alt && st.AltAt < from {
		s := vtstate.Initial(st.Cols, st.Rows)
		s.Alt, s.AltMode = true, st.AltMode
		return from, from, &s
	}
	return from, from, nil
}

// linesBefore is the offset from which the kept bytes before end hold
// lines newlines, not before lo.
func (j *journal) linesBefore(end uint64, lines int, lo uint64) uint64 {
	lo = max(lo, j.start)
	if end <= lo {
		return lo
	}
	slices := j.appendSlices(nil, lo, int(end-lo))
	off := end
	for i := len(slices) - 1; i >= 0; i-- {
		seg := slices[i]
		base := off - uint64(len(seg))
		for {
			k := bytes.LastIndexByte(seg, '\n')
			if k < 0 {
				break
			}
			if lines--; lines < 0 {
				return base + uint64(k) + 1
			}
			seg = seg[:k]
		}
		off = base
	}
	return lo
}

// appendRestore appends what a snapshot shows after the main screen's
// lines (drawn on whatever screen the host showed, from the home
// position, with the default modes and pen): the alternate screen if it
// is shown, then every mode of final, the cursor and the pen. sc is the
// screen the tail was rendered on; hostCols, the width of the emulator
// the snapshot is for when that is more than sc's (appendTabs).
func appendRestore(b []byte, sc *screen.Screen, final *vtstate.State, rows, hostCols int) []byte {
	alt := final.Alt
	// Tab stops: as the tail left them (from the defaults, or from a
	// tail that reached back to their first change), set on the main
	// screen. The alternate screen has stops of its own in xterm.js, the
	// defaults unless the program changed them there (set again below);
	// in xterm, one set for both.
	b = appendTabs(b, sc, hostCols)
	if alt {
		// The main screen's region and saved cursor, which leaving
		// the alternate screen restores, then the switch.
		b = final.AppendMainRegion(b)
		b = appendSavedCursor(b, sc, final, false)
		b = append(b, "\x1b[?"...)
		b = appendInt(b, final.AltMode)
		// The lines are drawn as the screen holds them (mapped
		// already), with ASCII in GL: the saved cursor left the
		// character sets it saved in force.
		b = append(b, "h\x1b[0m\x1b(B\x0f\x1b[H\x1b[2J"...)
		// The rendered screen shows what the program drew since it
		// entered the alternate screen, on the alternate screen or, if
		// the tail began after that with nothing to prime it, the main.
		fromAlt := sc.AltScreen()
		var line []byte
		for n := 1; n <= rows; n++ {
			line = sc.AppendScreenLine(line[:0], fromAlt, n, true)
			if len(line) == 0 {
				continue
			}
			b = append(b, "\x1b["...)
			b = appendInt(b, n)
			b = append(b, 'H')
			b = append(b, line...)
		}
	}
	if alt && final.AltTabsChanged {
		b = appendTabs(b, sc, hostCols)
	}
	// The margins before the saved cursor: an emulator without them
	// takes DECSLRM for a cursor save (vtstate.AppendMargins).
	b = final.AppendMargins(b)
	if final.Saved[screenIndex(alt)].Valid {
		b = appendSavedCursor(b, sc, final, alt)
	}
	b = final.AppendRegion(b)
	b = final.AppendModes(b)
	row, col := sc.Cursor()
	if sc.PendingWrap() && sc.AutoWrap() {
		// The last character went into the last column and the next
		// goes on the next line: only writing that cell again puts the
		// host's emulator in that state (a CUP clears it), after the
		// modes (DECSTBM and DECOM home the cursor). The cell holds the
		// character its character set mapped: it is written with ASCII
		// in GL, and the sets are restored after it.
		cell, start := sc.AppendCursorCell(nil)
		b = final.AppendCursorAt(b, row, start)
		b = append(b, "\x1b[0m\x1b(B\x0f"...) // the pen the cell's SGR starts from
		b = append(b, cell...)
		b = final.AppendCharsets(b)
	} else {
		b = final.AppendCursorAt(b, row, col)
	}
	b = final.AppendPen(b)
	return final.AppendCursorVisible(b)
}

func screenIndex(alt bool) int {
	if alt {
		return 1
	}
	return 0
}

// appendSavedCursor saves, as DECSC does, the cursor saved on the main or
// alternate screen: its position as the rendered screen has it, the pen
// and character sets as the tracker has them.
func appendSavedCursor(b []byte, sc *screen.Screen, final *vtstate.State, alt bool) []byte {
	sv := final.Saved[screenIndex(alt)]
	row, col, ok := sc.SavedCursor(alt)
	if !ok {
		row, col = 0, 0
	}
	s := vtstate.State{Pen: sv.Pen, G: sv.G, GL: sv.GL}
	b = append(b, "\x1b["...)
	b = appendInt(b, row+1)
	b = append(b, ';')
	b = appendInt(b, col+1)
	b = append(b, 'H')
	b = s.AppendPen(b)
	b = s.AppendCharsets(b)
	return append(b, "\x1b7"...)
}

// appendTabs sets the tab stops sc has. An emulator wider than sc
// (hostCols: a re-adopting host's, whose OPEN resizes the terminal after
// the repaint was rendered) also gets the stops a resize to its width
// adds past sc's last column, one every 8 columns (screen.Resize, as
// xterm and xterm.js): the repaint cleared every stop it had there.
func appendTabs(b []byte, sc *screen.Screen, hostCols int) []byte {
	b = append(b, "\x1b[3g"...)
	stop := func(c int) {
		b = append(b, "\x1b[1;"...)
		b = appendInt(b, c+1)
		b = append(b, "H\x1bH"...)
	}
	for _, c := range sc.TabStops() {
		stop(c)
	}
	cols, _ := sc.Size()
	for c := (cols + 7) / 8 * 8; c < hostCols; c += 8 {
		stop(c)
	}
	return b
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
