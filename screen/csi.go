package screen

import (
	"slices"
	"strconv"
)

var (
	replyDA1 = []byte("\x1b[?62;22c")  // VT220 with ANSI colour
	replyDA2 = []byte("\x1b[>1;10;0c") // "VT220", firmware 10, no ROM cartridge
)

// csiDispatch performs a complete control sequence.
func (s *Screen) csiDispatch(final byte) {
	p := s.seq
	switch p.Private {
	case 0:
	case '?':
		s.csiPrivate(final)
		return
	case '>':
		if final == 'c' && len(p.Inter) == 0 && p.Param(0, 0) == 0 {
			s.replies = append(s.replies, replyDA2...)
			return
		}
		if final == 'q' && len(p.Inter) == 0 && p.Param(0, 0) == 0 && s.version != "" {
			s.replies = append(append(append(s.replies, "\x1bP>|"...), s.version...), "\x1b\\"...)
			return
		}
		s.recordUnhandled()
		return
	default:
		s.recordUnhandled()
		return
	}
	if len(p.Inter) == 1 {
		s.csiIntermediate(p.Inter[0], final)
		return
	}
	if len(p.Inter) > 1 {
		s.recordUnhandled()
		return
	}
	n := p.Param(0, 1)
	switch final {
	case '@':
		s.insertBlanks(n)
	case 'A':
		s.cursorUp(n)
	case 'B':
		s.cursorDown(n)
	case 'e':
		// VPR moves as CUP does (xterm's CursorSet, xterm.js and
		// alacritty alike): to the screen's edge, past the scroll
		// region's bottom, and within the region only in origin mode.
		s.moveTo(s.row-s.originTop()+n, s.col-s.originLeft())
	case 'C':
		s.cursorForward(n)
	case 'a':
		// HPR is not bounded by the margins, but in origin mode, where
		// xterm's CursorSet keeps every move within them.
		s.moveColOrigin(s.col - s.originLeft() + n)
	case 'D':
		s.cursorBackward(n)
	case 'E':
		s.cursorDown(n)
		s.carriageReturn()
	case 'F':
		s.cursorUp(n)
		s.carriageReturn()
	case 'G', '`':
		s.moveColOrigin(n - 1)
	case 'H', 'f':
		s.moveTo(p.Param(0, 1)-1, p.Param(1, 1)-1)
	case 'I':
		s.tabForward(n)
	case 'J':
		s.eraseDisplay(p.Param(0, 0))
	case 'K':
		s.eraseLine(p.Param(0, 0))
	case 'L':
		s.insertLines(n)
	case 'M':
		s.deleteLines(n)
	case 'P':
		s.deleteChars(n)
	case 'S':
		s.scrollUp(s.top, s.bottom, n)
	case 'T':
		s.scrollDown(s.top, s.bottom, n)
	case 'X':
		s.eraseChars(n)
	case 'Z':
		s.tabBackward(n)
	case 'b':
		s.repeat(n)
	case 'c':
		if p.Param(0, 0) == 0 {
			s.replies = append(s.replies, replyDA1...)
		} else {
			s.recordUnhandled()
		}
	case 'd':
		// VPA: the row counts from the region's top in origin mode; the
		// column stays (moveTo takes it from the left margin there).
		s.moveTo(n-1, s.col-s.originLeft())
	case 'g':
		s.clearTabs(p.Param(0, 0))
	case 'h', 'l':
		s.setANSIModes(final == 'h')
	case 'm':
		s.sgr()
	case 'n':
		s.deviceStatus(false)
	case 'r':
		s.setRegion(p.Param(0, 1), p.Param(1, s.rows))
	case 's':
		if s.lrmm {
			s.setMargins(p.Param(0, 1), p.Param(1, s.cols))
		} else {
			s.saveCursor()
		}
	case 'u':
		s.restoreCursor()
	case 't':
		s.windowOp()
	default:
		s.recordUnhandled()
	}
}

// csiIntermediate handles CSI sequences with one intermediate byte.
func (s *Screen) csiIntermediate(inter, final byte) {
	switch {
	case inter == ' ' && final == 'q': // DECSCUSR
		s.cursorStyle = s.seq.Param(0, 0)
	case inter == '!' && final == 'p': // DECSTR
		s.softReset()
	case inter == '$' && final == 'p': // DECRQM for ANSI modes
		s.reportMode(false)
	default:
		s.recordUnhandled()
	}
}

// csiPrivate handles CSI ? ... sequences.
func (s *Screen) csiPrivate(final byte) {
	p := s.seq
	if len(p.Inter) == 1 && p.Inter[0] == '$' && final == 'p' {
		s.reportMode(true)
		return
	}
	if len(p.Inter) != 0 {
		s.recordUnhandled()
		return
	}
	switch final {
	case 'h', 'l':
		s.setPrivateModes(final == 'h')
	case 'J': // DECSED: no protected cells here, so same as ED
		s.eraseDisplay(p.Param(0, 0))
	case 'K':
		s.eraseLine(p.Param(0, 0))
	case 'n':
		s.deviceStatus(true)
	default:
		s.recordUnhandled()
	}
}

// deviceStatus answers DSR 5 (status) and 6 (cursor position report).
func (s *Screen) deviceStatus(private bool) {
	switch s.seq.Param(0, 0) {
	case 5:
		if !private {
			s.replies = append(s.replies, "\x1b[0n"...)
			return
		}
	case 6:
		// The position on the screen, origin mode or not: xterm.js and
		// alacritty (interminai's xterm mode) both answer so, where xterm
		// counts from the region's corner in origin mode.
		row, col := s.Cursor()
		s.replies = append(s.replies, 0x1b, '[')
		if private {
			s.replies = append(s.replies, '?')
		}
		s.replies = strconv.AppendInt(s.replies, int64(row+1), 10)
		s.replies = append(s.replies, ';')
		s.replies = strconv.AppendInt(s.replies, int64(col+1), 10)
		s.replies = append(s.replies, 'R')
		return
	}
	s.recordUnhandled()
}

// windowOp handles the xterm window operations that matter to a headless
// screen: the title stack (22/23), which vim uses around its own title.
// The screen keeps no icon name: a push or pop of the icon name alone
// (Ps 1) leaves the title stack as it is, as in xterm.js. Resizing and
// reporting requests are recorded as unhandled.
func (s *Screen) windowOp() {
	op := s.seq.Param(0, 0)
	if (op == 22 || op == 23) && s.seq.Param(1, 0) == 1 {
		return
	}
	switch op {
	case 22:
		if len(s.titles) < 16 {
			s.titles = append(s.titles, s.title)
		}
	case 23:
		if n := len(s.titles); n > 0 {
			s.title = s.titles[n-1]
			s.titles = s.titles[:n-1]
		}
	case 18:
		// The text area's size in characters, CSI 8 ; rows ; cols t, as
		// alacritty (interminai's xterm mode) answers it; programs that
		// ask (image viewers, size probes) wait for it. The size in
		// pixels (14) stays unanswered, as there: there are no pixels.
		s.replies = append(s.replies, "\x1b[8;"...)
		s.replies = strconv.AppendInt(s.replies, int64(s.rows), 10)
		s.replies = append(s.replies, ';')
		s.replies = strconv.AppendInt(s.replies, int64(s.cols), 10)
		s.replies = append(s.replies, 't')
	default:
		s.recordUnhandled()
	}
}

// repeat is REP: print the last graphic character n more times, the
// whole grapheme (base and combining marks) as xterm and tmux do.
func (s *Screen) repeat(n int) {
	if s.lastPrinted <= 0 {
		return
	}
	cluster := s.lastGrapheme()
	one := func() {
		if cluster == "" {
			s.printRune(s.lastPrinted)
			return
		}
		for _, r := range cluster {
			s.printRune(r)
		}
	}
	// A long REP fills the screen and then repeats itself: once every
	// row it reaches holds the repeated text, each further row is the
	// same, and the screen and cursor come back to a state they were in
	// after a period of a few rows' worth of characters. Printing a
	// screenful and then looking for that period (the cursor and every
	// cell as they were) lets REP 65535 cost a few screenfuls, and
	// leaves the screen and cursor exactly as the whole repeat would
	// (capping the count did not: the cursor ended elsewhere). Only the
	// scrollback keeps fewer of the repeated rows.
	span := s.cols * s.rows
	if n <= 2*span {
		for ; n > 0; n-- {
			one()
		}
		return
	}
	for i := 0; i < span; i++ {
		one()
	}
	n -= span
	mark := s.markGrid()
	for p := 1; p <= span && n > 0; p++ {
		one()
		n--
		if mark.same(s) {
			n %= p
			break
		}
	}
	for ; n > 0; n-- {
		one()
	}
}

// gridMark is the cursor and the cells of the screen shown, for repeat to
// recognise the state coming back.
type gridMark struct {
	row, col int
	pending  bool
	lines    [][]cell
	wrapped  []bool
}

func (s *Screen) markGrid() gridMark {
	m := gridMark{row: s.row, col: s.col, pending: s.pendingWrap}
	for r := 0; r < s.rows; r++ {
		m.lines = append(m.lines, slices.Clone(s.line(r)))
		m.wrapped = append(m.wrapped, s.cur.isWrapped(r))
	}
	return m
}

// same reports whether the screen is back in the marked state: the
// cursor first, which rules out most steps at once.
func (m *gridMark) same(s *Screen) bool {
	if s.row != m.row || s.col != m.col || s.pendingWrap != m.pending {
		return false
	}
	for r := 0; r < s.rows; r++ {
		if s.cur.isWrapped(r) != m.wrapped[r] || !slices.Equal(s.line(r), m.lines[r]) {
			return false
		}
	}
	return true
}

// lastGrapheme returns the cluster text of the cell the last character
// went into, or "" when that cell holds a single code point. Nothing has
// moved the cursor since (anything that could would have cleared
// lastPrinted), so the cell is the one just left of it, or under it
// while a wrap is pending; a wide character's lead is one further left.
func (s *Screen) lastGrapheme() string {
	col := s.col
	if !s.pendingWrap {
		col--
	}
	line := s.line(s.row)
	if col > 0 && col < len(line) && line[col].flags&flagWideTrail != 0 {
		col--
	}
	if col < 0 || col >= len(line) || line[col].r >= 0 || int(-line[col].r-1) >= len(s.clusters) {
		return ""
	}
	return s.clusters[-line[col].r-1]
}
