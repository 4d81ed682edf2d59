package vtstate

import (
	"bytes"

	"github.com/ptyplex/ptyplex/screen/vtparse"
)

// Checkpoint is the state at one offset of the stream, where no sequence
// was under way and no UTF-8 character begun: a screen primed with it
// (AppendPrime) and fed the stream from Off renders what a terminal fed
// the whole stream shows, but for the cells drawn before Off. A
// checkpoint is taken, once the interval is over, where the tracker knows
// the cursor (State.Cursor) or just before a CUP, and a quarter of an
// interval later wherever it can (the cursor then goes where the prime
// guesses it).
type Checkpoint struct {
	Off   uint64 `json:"off"`
	State State  `json:"state"`
}

// maxCheckpoints bounds what a tracker keeps whatever its caller
// forgets: the oldest go first.
const maxCheckpoints = 64

// Tracker follows a stream of terminal output (Write) and keeps its
// State, and a checkpoint of it every so many bytes. It is not safe for
// concurrent use.
type Tracker struct {
	st    State
	off   uint64 // bytes fed since the stream began
	seqAt uint64 // offset of the ESC that began the sequence being parsed
	p     vtparse.Parser
	// every is the checkpoint interval in bytes (0: none); lastCP the
	// offset of the latest checkpoint.
	every  uint64
	lastCP uint64
	cps    []mark
}

// mark is a checkpoint as a tracker keeps it. Checkpoints whose states
// are equal share one State: the modes, the pen and the cursor of a
// program's output seldom differ from one checkpoint to the next (a
// flood, a build log scrolling at the bottom), and a server keeps a
// tracker, and so up to twenty checkpoints, for every terminal.
type mark struct {
	off uint64
	st  *State
}

func (m mark) checkpoint() Checkpoint { return Checkpoint{Off: m.off, State: *m.st} }

// markOf returns a mark of st at off, sharing the State of a kept
// checkpoint equal to it if there is one.
func (t *Tracker) markOf(off uint64, st *State) mark {
	for i := len(t.cps) - 1; i >= 0; i-- {
		if *t.cps[i].st == *st {
			return mark{off: off, st: t.cps[i].st}
		}
	}
	p := new(State)
	*p = *st
	return mark{off: off, st: p}
}

// New returns a tracker of a terminal of cols x rows at offset 0 that
// takes a checkpoint every `every` bytes (at the first point after them
// where no sequence is under way); 0 takes none but the first.
func New(cols, rows, every int) *Tracker {
	t := &Tracker{st: Initial(cols, rows), every: uint64(max(every, 0))}
	t.p.MaxOSC = maxTitle
	// Room for the checkpoints of a journal of sixteen intervals (the
	// persistent server's, sidecar/persist/modes.go) and a few more at
	// once: grown by doubling, the slice would take 32, most of them
	// never used, and a server keeps one per terminal.
	room := 1
	if every > 0 {
		room = 20
	}
	t.cps = make([]mark, 0, room)
	t.cps = append(t.cps, t.markOf(0, &t.st))
	return t
}

// maxTitle caps the title kept (and so the OSC payload parsed).
const maxTitle = 1024

// State returns the state after every byte fed so far (a sequence still
// under way has not changed it yet).
func (t *Tracker) State() State { return t.st }

// Mode is State().Mode for the current state, without the copy.
func (t *Tracker) Mode(n int, private bool) (set, known bool) { return t.st.Mode(n, private) }

// Offset is how many bytes were fed (plus the offset it resumed at).
func (t *Tracker) Offset() uint64 { return t.off }

// Pending is the offset of the sequence under way, or Offset when there
// is none: what a tracker resumed from State must be fed again from.
func (t *Tracker) Pending() uint64 {
	if t.p.InSequence() {
		return t.seqAt
	}
	return t.off
}

// Resize records a new size: as in xterm.js, it resets the scroll region
// of both screens. The screen reflows its lines: the cursor and the
// saved cursors are no longer known.
func (t *Tracker) Resize(cols, rows int) {
	t.st.resizeTabs(cols)
	t.st.Cols, t.st.Rows = cols, rows
	t.st.Cur, t.st.RegionOdd = 0, false
	t.st.Saved[0].At, t.st.Saved[1].At = false, false
	t.st.resetRegion()
	t.st.MainTop, t.st.MainBottom = 0, 0
}

// Checkpoint returns the latest checkpoint at or before off.
func (t *Tracker) Checkpoint(off uint64) (Checkpoint, bool) {
	for i := len(t.cps) - 1; i >= 0; i-- {
		if t.cps[i].off <= off {
			return t.cps[i].checkpoint(), true
		}
	}
	return Checkpoint{}, false
}

// CheckpointFrom returns the earliest checkpoint at or after off.
func (t *Tracker) CheckpointFrom(off uint64) (Checkpoint, bool) {
	for _, m := range t.cps {
		if m.off >= off {
			return m.checkpoint(), true
		}
	}
	return Checkpoint{}, false
}

// Checkpoints returns the checkpoints kept, oldest first.
func (t *Tracker) Checkpoints() []Checkpoint {
	cps := make([]Checkpoint, len(t.cps))
	for i, m := range t.cps {
		cps[i] = m.checkpoint()
	}
	return cps
}

// Forget drops the checkpoints before off: the stream before it is gone,
// so they can no longer be replayed from.
func (t *Tracker) Forget(off uint64) {
	n := 0
	for n < len(t.cps) && t.cps[n].off < off {
		n++
	}
	if n > 0 {
		t.cps = append(t.cps[:0], t.cps[n:]...)
	}
}

// Resume returns a tracker in state st at offset off with checkpoints
// cps (a live upgrade's handover): the caller feeds it the stream again
// from the Pending offset the previous tracker reported.
func Resume(st State, off uint64, every int, cps []Checkpoint) *Tracker {
	t := &Tracker{st: st, off: off, every: uint64(max(every, 0)), cps: make([]mark, 0, max(len(cps), 20))}
	for i := range cps {
		t.cps = append(t.cps, t.markOf(cps[i].Off, &cps[i].State))
	}
	t.p.MaxOSC = maxTitle
	if len(t.cps) > 0 {
		t.lastCP = t.cps[len(t.cps)-1].off
	} else {
		t.lastCP = off
	}
	return t
}

// Write feeds b, the next bytes of the stream. Text is skipped with
// bytes.IndexByte: only the escape sequences, SO and SI change state.
func (t *Tracker) Write(b []byte) {
	for len(b) > 0 {
		if t.every > 0 && t.off-t.lastCP >= t.every && !t.p.InSequence() && b[0]&0xc0 != 0x80 {
			if _, _, ok := t.st.Cursor(); ok || t.off-t.lastCP >= t.every+t.every/4 {
				t.checkpoint()
			}
		}
		if t.p.InSequence() {
			n := t.p.ParseSequence(b, t)
			t.off += uint64(n)
			b = b[n:]
			continue
		}
		text := b
		if i := bytes.IndexByte(b, 0x1b); i >= 0 {
			text = b[:i]
		}
		t.shifts(text)
		t.st.text(text)
		t.off += uint64(len(text))
		b = b[len(text):]
		if n := t.fastCSI(b); n > 0 {
			t.off += uint64(n)
			b = b[n:]
			continue
		}
		if n := t.fastSGR(b); n > 0 {
			t.off += uint64(n)
			b = b[n:]
			continue
		}
		if len(b) > 0 {
			t.seqAt = t.off
			n := t.p.ParseSequence(b, t)
			t.off += uint64(n)
			b = b[n:]
		}
	}
}

// ignoredFinal marks the final bytes of the CSIs that change nothing
// the tracker keeps, whatever their parameters: cursor movement, erasing,
// inserting and deleting, scrolling, device queries. They are most of
// what full-screen programs write besides text and SGR.
var ignoredFinal = func() (f [256]bool) {
	for _, c := range []byte("@ABCDEFGHIJKLMPSTXZ`abcdef") {
		f[c] = true
	}
	return f
}()

// fastCSI takes the CSI b starts with if it is whole in b and
// ignoredFinal ends it: it skips it, or applies its move to the cursor
// (plain parameters only: digits and ';'), and returns its length; else
// 0 (the parser takes it). A CUP due for a checkpoint gets it first:
// where it puts the cursor does not depend on where the cursor was.
func (t *Tracker) fastCSI(b []byte) int {
	if len(b) < 3 || b[0] != 0x1b || b[1] != '[' {
		return 0
	}
	var p [2]int
	n, plain := 0, true
	i := 2
	for ; i < len(b) && b[i] >= 0x30 && b[i] <= 0x3f; i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			if n == 0 {
				n = 1
			}
			if n <= len(p) && p[n-1] < 65535 {
				p[n-1] = p[n-1]*10 + int(c-'0')
			}
		case c == ';':
			if n == 0 {
				n = 1
			}
			n++
		default:
			plain = false
		}
	}
	if i == len(b) || !ignoredFinal[b[i]] {
		return 0
	}
	if f := b[i]; cursorFinals[f] {
		if !plain {
			return 0
		}
		if (f == 'H' || f == 'f') && t.every > 0 && t.off-t.lastCP >= t.every {
			t.checkpoint()
		}
		t.st.cursorCSI(f, p[:min(n, len(p))])
	}
	return i + 1
}

// fastSGR applies the SGR b starts with if it is whole in b and plain
// (digits, ';' and ':' only, at most 32 parameters), and returns its
// length; else 0 (the parser takes it). Full-screen programs write one
// every few characters.
func (t *Tracker) fastSGR(b []byte) int {
	if len(b) < 3 || b[0] != 0x1b || b[1] != '[' {
		return 0
	}
	var params [32]int
	var sub [32]bool
	n := 0
	for i := 2; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			if n == 0 {
				n = 1
			}
			if v := &params[n-1]; *v < 65535 {
				*v = *v*10 + int(c-'0')
			}
		case c == ';' || c == ':':
			if n == 0 {
				n = 1
			}
			if n == len(params) {
				return 0
			}
			sub[n] = c == ':'
			n++
		case c == 'm':
			t.st.Pen.apply(params[:n], sub[:n])
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// shifts applies the last SO or SI in text, the only controls outside a
// sequence that change what the tracker keeps.
func (t *Tracker) shifts(text []byte) {
	// IndexByte first: it is vectorised, LastIndexByte is not, and text
	// rarely holds either.
	if bytes.IndexByte(text, 0x0e) < 0 && bytes.IndexByte(text, 0x0f) < 0 {
		return
	}
	so, si := bytes.LastIndexByte(text, 0x0e), bytes.LastIndexByte(text, 0x0f)
	switch {
	case so < 0 && si < 0:
	case so > si:
		t.st.GL = 1
	default:
		t.st.GL = 0
	}
}

func (t *Tracker) checkpoint() {
	if len(t.cps) >= maxCheckpoints {
		t.cps = append(t.cps[:0], t.cps[1:]...)
	}
	t.cps = append(t.cps, t.markOf(t.off, &t.st))
	t.lastCP = t.off
}

// The vtparse.Handler methods. Text never reaches them (Write skips it);
// Print and PrintRune are there for the interface.

func (t *Tracker) Print([]byte)   {}
func (t *Tracker) PrintRune(rune) {}

// Execute sees the controls inside sequences, which act at once.
func (t *Tracker) Execute(c byte) {
	switch c {
	case 0x0e:
		t.st.GL = 1
	case 0x0f:
		t.st.GL = 0
	default:
		t.st.text([]byte{c})
	}
}

func (t *Tracker) String(*vtparse.Seq) {}

// screenIndex is 1 on the alternate screen, 0 on the main one.
func (s *State) screenIndex() int {
	if s.Alt {
		return 1
	}
	return 0
}

func (t *Tracker) CSI(q *vtparse.Seq) {
	if q.Malformed {
		return
	}
	if q.Final != 'm' || q.Private != 0 || len(q.Inter) != 0 {
		// Sub-parameters mean something to SGR only (screen: the same).
		q = q.WithoutSubParams(nil)
	}
	s := &t.st
	inter := byte(0)
	if len(q.Inter) == 1 {
		inter = q.Inter[0]
	} else if len(q.Inter) > 1 {
		return
	}
	switch {
	case q.Private == '?' && inter == 0 && (q.Final == 'h' || q.Final == 'l'):
		for _, n := range q.Params {
			t.decset(n, q.Final == 'h')
		}
	case q.Private == 0 && inter == 0 && cursorFinals[q.Final]:
		s.cursorCSI(q.Final, q.Params)
	case q.Private == 0 && inter == 0:
		switch q.Final {
		case 'h', 'l':
			for _, n := range q.Params {
				switch n {
				case 4:
					s.Insert = q.Final == 'h'
				case 20:
					s.Newline = q.Final == 'h'
				}
			}
		case 'm':
			s.Pen.apply(q.Params, q.Sub)
		case 'r':
			top := q.Param(0, 1)
			bottom := q.Param(1, 0)
			if len(q.Params) < 2 || bottom > s.Rows || bottom == 0 {
				bottom = s.Rows
			}
			if bottom > top {
				s.Top, s.Bottom = top-1, bottom-1
				s.RegionOdd = false // the screen's too
				s.home()
			}
		case 'g':
			if n := q.Param(0, 0); n == 0 || n == 3 {
				s.setTab(false, n == 3)
				t.tabsChanged()
			}
		case 's':
			if s.Private&bitLRMM == 0 {
				t.saveCursor()
			} else {
				s.setMargins(q.Param(0, 1), q.Param(1, s.Cols))
			}
		case 't':
			t.titleStack(q)
		case 'u':
			t.restoreCursor()
		}
	case q.Private == 0 && inter == ' ' && q.Final == 'q':
		s.Shape = q.Param(0, 0)
		s.ShapeSeen, s.BlinkLast = true, false
	case q.Private == '?' && inter == 0 && q.Final == 'W' && q.Param(0, 0) == 5:
		// DECST8C: stops every 8 columns again. (The screen package
		// does not have it: the stops it renders are then not known.)
		s.TabsChanged, s.TabsKnown, s.Tabs = false, false, tabsReset
	case q.Private == 0 && inter == '!' && q.Final == 'p':
		t.softReset()
	case q.Private == '>' && inter == 0 && q.Final == 'm' && q.Param(0, 0) == 4:
		s.ModifyOtherKeys = 0
		if len(q.Params) > 1 {
			s.ModifyOtherKeys = q.Params[1]
		}
	case q.Private == '>' && inter == 0 && q.Final == 'n' && q.Param(0, 0) == 4:
		s.ModifyOtherKeys = 0
	case q.Final == 'u' && inter == 0 && (q.Private == '>' || q.Private == '<' || q.Private == '='):
		t.kitty(q)
	}
}

// decset handles DECSET (on) and DECRST of mode n.
func (t *Tracker) decset(n int, on bool) {
	s := &t.st
	switch n {
	case 47, 1047, 1049:
		if on {
			if n == 1049 {
				t.saveCursor() // in the slot of the screen shown now, as xterm
			}
			if !s.Alt {
				s.RegionOdd = s.RegionOdd || !s.FullRegion() // the screen keeps it
				s.Alt, s.AltMode, s.AltAt = true, n, t.seqAt
				s.MainTop, s.MainBottom = uint16(s.Top), uint16(s.Bottom)
				s.Top, s.Bottom = 0, max(s.Rows, 1)-1
				s.AltTabsChanged = false
			}
		} else {
			if s.Alt {
				// The screen keeps the alternate screen's region.
				top, bottom := s.mainRegion()
				s.RegionOdd = s.RegionOdd || top != s.Top || bottom != s.Bottom
				s.Top, s.Bottom = top, bottom
				s.MainTop, s.MainBottom = 0, 0
				s.AltTabsChanged = false
			}
			s.Alt = false
			if n == 1049 {
				t.restoreCursor()
			}
		}
		return
	case 1048:
		if on {
			t.saveCursor()
		} else {
			t.restoreCursor()
		}
		return
	case 66:
		s.Keypad = on
		return
	case 69:
		if !on {
			s.resetMargins() // as xterm: leaving the mode drops them
		}
	case 6:
		defer s.home()
	case 3:
		// DECCOLM, as screen runs it: the region and margins reset, the
		// cursor home.
		s.resetRegion()
		s.RegionOdd = false // the screen's too
		defer s.home()
	case 12:
		s.BlinkLast = true
	}
	for _, m := range mouseModes {
		if m == n {
			if on {
				s.Mouse = n
			} else {
				s.Mouse = 0
			}
			return
		}
	}
	for _, m := range mouseEncModes {
		if m == n {
			if on {
				s.MouseEnc = n
			} else {
				s.MouseEnc = 0
			}
			if n == 1006 || n == 1016 {
				s.MouseSGR = int16(s.MouseEnc)
			}
			return
		}
	}
	s.setPrivate(n, on)
}

func (t *Tracker) saveCursor() {
	s := &t.st
	row, col, at := s.Cursor()
	s.Saved[s.screenIndex()] = Saved{Valid: true, Pen: s.Pen, G: s.G, GL: s.GL, At: at, Row: uint16(row), Col: uint16(col)}
}

// restoreCursor is DECRC: the pen and character sets saved on the screen
// shown now, or the defaults if none were.
func (t *Tracker) restoreCursor() {
	s := &t.st
	sv := s.Saved[s.screenIndex()]
	s.Pen, s.G, s.GL = sv.Pen, sv.G, sv.GL
	// The position, as screen.restoreCursor: home if none was saved.
	if sv.Valid && !sv.At {
		s.Cur = 0
		return
	}
	row, col := clampInt(int(sv.Row), 0, s.Rows-1), clampInt(int(sv.Col), 0, s.Cols-1)
	if s.Private&bitOrigin != 0 {
		if s.RegionOdd {
			s.Cur = 0
			return
		}
		left, right := s.Margins()
		row, col = clampInt(row, s.Top, s.Bottom), clampInt(col, left, right)
	}
	s.setCursor(row, col)
}

// tabsChanged records that stops were set or cleared (after setTab).
func (t *Tracker) tabsChanged() {
	if t.st.Alt {
		t.st.AltTabsChanged = true
	}
	if !t.st.TabsChanged {
		t.st.TabsChanged, t.st.TabsAt = true, t.seqAt
	}
}

// softReset is DECSTR, as xterm.js does it.
func (t *Tracker) softReset() {
	s := &t.st
	for _, n := range []int{1, 6, 45, 1004, 2004, 2026} {
		s.setPrivate(n, false)
	}
	s.setPrivate(7, true)
	s.setPrivate(25, true)
	s.Keypad, s.Insert = false, false
	s.RegionOdd = false // the screen's is reset too
	s.resetRegion()
	s.Pen = Pen{}
	s.G, s.GL = [4][2]byte{}, 0
	s.Saved[s.screenIndex()] = Saved{}
	s.Cur &^= curWrap // the cursor stays
	// The cursor's shape goes back to the emulator's own. Blinking set
	// by ?12 stays: xterm.js makes it its option, which outlives DECSTR
	// and RIS.
	s.Shape, s.ShapeSeen, s.BlinkLast = 0, false, false
}

// fullReset is RIS. The title stays, as in xterm, and so does ?12.
func (t *Tracker) fullReset() {
	s := &t.st
	title, titleSeen, icon, iconSeen := s.Title, s.TitleSeen, s.Icon, s.IconSeen
	blink := uint64(1) << privIndex(12)
	private, seen := s.Private&blink, s.PrivateSeen&blink
	*s = Initial(s.Cols, s.Rows)
	s.Title, s.TitleSeen, s.Icon, s.IconSeen = title, titleSeen, icon, iconSeen
	// ?12's blinking is an option in xterm.js, which RIS leaves.
	s.Private, s.PrivateSeen = s.Private|private, s.PrivateSeen|seen
}

func (t *Tracker) kitty(q *vtparse.Seq) {
	s := &t.st
	s.KittySeen = true
	k := &s.Kitty[s.screenIndex()]
	switch q.Private {
	case '>':
		if int(k.N) == len(k.Stack) {
			copy(k.Stack[:], k.Stack[1:])
			k.N--
		}
		k.Stack[k.N] = k.Flags
		k.N++
		k.Flags = uint8(q.Param(0, 0))
	case '<':
		for n := q.Param(0, 1); n > 0; n-- {
			if k.N == 0 {
				k.Flags = 0
				break
			}
			k.N--
			k.Flags = k.Stack[k.N]
			k.Stack[k.N] = 0
		}
	case '=':
		f := uint8(q.Param(0, 0))
		switch q.Param(1, 1) {
		case 1:
			k.Flags = f
		case 2:
			k.Flags |= f
		case 3:
			k.Flags &^= f
		}
	}
}

func (t *Tracker) ESC(q *vtparse.Seq) {
	if q.Malformed {
		return
	}
	s := &t.st
	switch len(q.Inter) {
	case 0:
		switch q.Final {
		case 'c':
			t.fullReset()
		case '=':
			s.Keypad = true
		case '>':
			s.Keypad = false
		case 'H':
			s.setTab(true, false)
			t.tabsChanged()
		case '7':
			t.saveCursor()
		case '8':
			t.restoreCursor()
		case 'D':
			s.index()
			s.Cur &^= curWrap
		case 'E':
			s.index()
			s.Col, s.Cur = 0, s.Cur&^(curWrap|curMax)|curCol
			if s.margined() {
				s.Cur &^= curCol
			}
		case 'M':
			s.reverseIndex()
		case 'n':
			s.GL = 2
		case 'o':
			s.GL = 3
		}
	case 1:
		if q.Inter[0] == '#' && q.Final == '8' {
			s.setCursor(0, 0) // DECALN (the screen resets the region too)
		}
		g := -1
		switch q.Inter[0] {
		case '(':
			g = 0
		case ')', '-':
			g = 1
		case '*', '.':
			g = 2
		case '+', '/':
			g = 3
		case '%':
			if q.Final == '@' || q.Final == 'G' {
				s.G, s.GL = [4][2]byte{}, 0 // xterm.js: the default charset
			}
		}
		if g >= 0 {
			if q.Final == 'B' && q.Inter[0] < '-' {
				s.G[g] = [2]byte{} // ASCII: the default
			} else {
				s.G[g] = [2]byte{q.Inter[0], q.Final}
			}
		}
	}
}

// titleStack is CSI 22 t (push) and CSI 23 t (pop), of the title (Ps 2),
// the icon name (1) or both (0, or none).
func (t *Tracker) titleStack(q *vtparse.Seq) {
	op := q.Param(0, 0)
	if op != 22 && op != 23 {
		return
	}
	which := 0
	if len(q.Params) > 1 {
		which = q.Params[1]
	}
	s := &t.st
	if which == 0 || which == 2 {
		titleOp(&s.TitleStack, &s.Title, &s.TitleSeen, op == 22)
	}
	if which == 0 || which == 1 {
		titleOp(&s.IconStack, &s.Icon, &s.IconSeen, op == 22)
	}
}

// titleOp pushes *cur on k or pops it into *cur.
func titleOp(k *Stack, cur *string, seen *bool, push bool) {
	if push {
		k.push(*cur)
	} else if v, ok := k.pop(); ok {
		*cur, *seen = v, true
	}
}

func (t *Tracker) OSC(q *vtparse.Seq) {
	d := q.Data
	semi := bytes.IndexByte(d, ';')
	if semi < 0 {
		return
	}
	s := &t.st
	switch string(d[:semi]) {
	case "0":
		s.Title, s.TitleSeen = string(d[semi+1:]), true
		s.Icon, s.IconSeen = s.Title, true
	case "1":
		s.Icon, s.IconSeen = string(d[semi+1:]), true
	case "2":
		s.Title, s.TitleSeen = string(d[semi+1:]), true
	}
}
