package screen

import (
	"bytes"
	"crypto/subtle"
	"strconv"
)

// maxMarks bounds the marks kept: the oldest go first, like scrollback.
const maxMarks = 1000

// Mark is one shell-integration mark (OSC 133): where a prompt started
// (A), the command line began (B), its output began (C) or the command
// finished (D, with its exit status when the shell sent one).
type Mark struct {
	Kind byte // 'A', 'B', 'C' or 'D'
	// Line is the absolute line the cursor was on: lines that had
	// scrolled off the top of the main screen by then, plus the cursor's
	// row (both from 0). It stays meaningful as output scrolls on: with
	// k = Line-ScrolledOff(), the line is Line(k+1) while k >= 0 and
	// scrollback line Line(k) (-1 the newest) after it scrolled off.
	// On the alternate screen it is just the row.
	Line      int
	Col       int
	Status    int  // D's exit status
	HasStatus bool // D carried a status
	Alt       bool // the alternate screen was showing
}

// Marks returns the OSC 133 marks received, oldest first (at most the
// last thousand).
func (s *Screen) Marks() []Mark { return append([]Mark(nil), s.marks...) }

// MarksTotal returns how many OSC 133 marks have been received since the
// Screen started, never decreasing (even when the oldest are dropped or a
// reset clears them), so that a reader polling Marks can tell which are
// new: the last MarksTotal()-seen of them.
func (s *Screen) MarksTotal() int { return s.marksTotal }

// MarkKeyParam names the OSC 133 parameter that carries the key set by
// RequireMarkKey: "\x1b]133;D;0;ptyplex=KEY\a".
const MarkKeyParam = "ptyplex"

// RequireMarkKey makes the Screen record only the OSC 133 marks that carry
// the parameter ptyplex=key; the others are dropped, as an unknown OSC is,
// and counted by ForgedMarks. Any program whose output reaches the screen
// (a file it prints, a remote host) can send a mark; only the one who knows
// the key (a shell whose startup file holds it) can send one that counts.
// An empty key accepts every mark, as before.
func (s *Screen) RequireMarkKey(key string) { s.markKey = key }

// ForgedMarks returns how many OSC 133 marks were dropped for lacking the
// key RequireMarkKey set.
func (s *Screen) ForgedMarks() int { return s.marksForged }

// hasMarkKey reports whether the mark's arguments (after the kind) hold
// ptyplex=KEY with the required key.
func (s *Screen) hasMarkKey(a []byte) bool {
	want := []byte(MarkKeyParam + "=")
	ok := false
	for len(a) > 0 {
		p := a
		if i := bytes.IndexByte(a, ';'); i >= 0 {
			p, a = a[:i], a[i+1:]
		} else {
			a = nil
		}
		if v, found := bytes.CutPrefix(p, want); found && subtle.ConstantTimeCompare(v, []byte(s.markKey)) == 1 {
			ok = true
		}
	}
	return ok
}

// LineWrapped reports whether line n (numbered as for Line) continues on
// the next line because the text wrapped there, not because of a newline.
func (s *Screen) LineWrapped(n int) bool {
	switch {
	case n >= 1 && n <= s.rows:
		return s.cur.isWrapped(n - 1)
	case n <= -1 && -n <= s.scroll.len():
		return s.scroll.wrappedAt(-n)
	}
	return false
}

// ScrolledOff returns how many lines have scrolled off the top of the main
// screen since the Screen started, the origin of Mark.Line.
func (s *Screen) ScrolledOff() int { return s.scrolledOff }

// addMark records OSC 133 with arguments a ("A", "D;0", "A;k=v", ...).
// Kinds other than A-D are left to recordUnhandled's caller.
func (s *Screen) addMark(a []byte) {
	if len(a) == 0 || a[0] < 'A' || a[0] > 'D' || (len(a) > 1 && a[1] != ';') {
		s.recordUnhandled()
		return
	}
	if s.markKey != "" && !s.hasMarkKey(a[1:]) {
		s.marksForged++
		s.recordUnhandled()
		return
	}
	m := Mark{Kind: a[0], Line: s.row, Col: s.col, Alt: s.altActive}
	if !s.altActive {
		m.Line += s.scrolledOff
	}
	if m.Kind == 'D' && len(a) > 2 {
		rest := a[2:]
		for i, c := range rest {
			if c == ';' {
				rest = rest[:i]
				break
			}
		}
		if n, err := strconv.Atoi(string(rest)); err == nil {
			m.Status, m.HasStatus = n, true
		}
	}
	if len(s.marks) == maxMarks {
		copy(s.marks, s.marks[1:])
		s.marks = s.marks[:maxMarks-1]
	}
	s.marks = append(s.marks, m)
	s.marksTotal++
}
