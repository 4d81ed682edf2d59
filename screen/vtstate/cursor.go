package vtstate

import "encoding/binary"

// The cursor, as far as the tracker can follow it without cells: exactly
// after an absolute move (CUP, CHA, VPA, a region set, a reset...), and
// through what comes after it as long as that stays simple: printable
// ASCII (wrapping included), CR, LF, BS, TAB, the relative moves. What it
// cannot follow (a character of another width, REP, margins, a resize)
// makes the coordinate unknown until the next absolute move; CR makes the
// column known again, so a shell's output keeps it. It is what a
// checkpoint needs to put the cursor where the tail's first byte finds it,
// what DECSC saves and where HTS sets a stop. The rules are the screen
// package's (screen/cursor.go), which renders the SNAPSHOT.

// Cur bits. (RegionOdd says the screen's scroll region may not be the
// one the tracker keeps: the screen, as xterm, has one for both screens,
// and the tracker, as xterm.js, one for each. Where the region matters
// then, the row is not known.)
const (
	curRow  = 1 << iota // Row is the cursor's row
	curCol              // Col is the cursor's column
	curWrap             // a wrap is pending (Col is the last column)
	curMax              // Col is only an upper bound of the column (curCol unset)
)

// longRun is the text run past which the tracker only looks at its last
// line (for the column after a CR): a flood's reads are that long, and
// its row matters little (it is at the bottom of the region).
const longRun = 512

// Cursor reports the cursor where the tracker knows it: ok is false when
// the row or the column is unknown or a wrap is pending.
func (s *State) Cursor() (row, col int, ok bool) {
	return int(s.Row), int(s.Col), s.Cur&(curRow|curCol|curWrap) == curRow|curCol
}

// CursorRow reports the cursor's row where the tracker knows it.
func (s *State) CursorRow() (row int, ok bool) { return int(s.Row), s.Cur&curRow != 0 }

func (s *State) setCursor(row, col int) {
	s.Row, s.Col, s.Cur = uint16(row), uint16(col), curRow|curCol
}

// home is the cursor after a region is set or origin mode changes.
func (s *State) home() {
	if s.RegionOdd && s.Private&bitOrigin != 0 {
		s.Cur = 0
		return
	}
	if s.Private&bitOrigin != 0 {
		left, _ := s.Margins()
		s.setCursor(s.Top, left)
		return
	}
	s.setCursor(0, 0)
}

// margined says left and right margins are in force: the tracker does
// not follow the cursor through text then.
func (s *State) margined() bool { return s.Right != 0 && s.Private&bitLRMM != 0 }

// text follows the cursor through a run of text (no ESC in it).
func (s *State) text(p []byte) {
	if len(p) == 0 {
		return
	}
	if s.margined() {
		s.Cur = 0
		return
	}
	if len(p) > longRun || s.Cur&(curRow|curCol|curMax) == 0 {
		s.lastLine(p)
		return
	}
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f {
			j := i + printable(p[i:])
			s.print(j - i)
			i = j
			continue
		}
		switch c {
		case '\r':
			s.Col, s.Cur = 0, s.Cur&^(curWrap|curMax)|curCol
		case '\n', 0x0b, 0x0c:
			s.index()
			if s.Newline {
				s.Col, s.Cur = 0, s.Cur&^curMax|curCol
			}
			s.Cur &^= curWrap
		case 0x08:
			if s.Cur&curCol != 0 {
				s.Cur &^= curWrap
				if s.Col > 0 {
					s.Col--
				}
			} else {
				s.Cur &^= curMax | curWrap
			}
		case '\t':
			s.ht()
		case 0x7f:
		default:
			if c < 0x20 {
				break // other controls do not move the cursor
			}
			// A character of another width: its line up to the next
			// control is at most as many cells as bytes, so the row is
			// still known if that cannot reach the last column.
			k := i
			for k < len(p) && p[k] >= 0x20 {
				k++
			}
			if s.Cur&(curCol|curMax) != 0 && s.Cur&curWrap == 0 && int(s.Col)+k-i < s.Cols-1 {
				s.Col += uint16(k - i)
				s.Cur = s.Cur&^curCol | curMax
			} else {
				s.Cur = 0
			}
			i = k
			continue
		}
		i++
	}
}

// lastLine sets the column from the last line of p when a CR starts it
// (LFs between do not move the column) and p's end is plain ASCII, and
// forgets the row.
func (s *State) lastLine(p []byte) {
	i := len(p) - 1
	for i >= 0 && p[i] >= 0x20 && p[i] < 0x7f {
		i--
	}
	n := len(p) - 1 - i
	for i >= 0 && (p[i] == '\n' || p[i] == 0x0b || p[i] == 0x0c) {
		i--
	}
	if i < 0 || p[i] != '\r' {
		if len(p) <= longRun && i < 0 && n == len(p) {
			s.print(n) // all of it printable
			return
		}
		s.Cur = 0
		return
	}
	s.Col, s.Cur = 0, curCol
	s.print(n)
}

// printable is how many printable ASCII bytes p starts with, eight at a
// time where it can.
func printable(p []byte) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(p); i += 8 {
		x := binary.LittleEndian.Uint64(p[i:])
		// A byte under 0x20, at or over 0x7f (0x7f: x+1 reaches 0x80).
		if ((x-lo*0x20)|x|(x+lo))&hi != 0 {
			break
		}
	}
	for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
		i++
	}
	return i
}

// print advances the cursor over n printable ASCII characters.
func (s *State) print(n int) {
	if n == 0 {
		return
	}
	cols := max(s.Cols, 1)
	if s.Cur&curMax != 0 {
		if int(s.Col)+n < cols-1 {
			s.Col += uint16(n)
		} else {
			s.Cur = 0
		}
		return
	}
	if s.Cur&curCol == 0 {
		s.Cur &^= curRow // it may have wrapped
		return
	}
	if s.Private&bitWrap == 0 {
		if int(s.Col)+n < cols {
			s.Col += uint16(n)
			return
		}
		s.Cur = 0 // the last column written, autowrap off: left to the screen
		return
	}
	c := int(s.Col)
	if s.Cur&curWrap == 0 && c+n < cols {
		s.Col += uint16(n) // most text: no wrap
		return
	}
	if s.Cur&curWrap != 0 {
		s.index()
		c = 0
	}
	v := c + n - 1                  // where the last character goes, on a line that does not wrap
	for range min(v/cols, s.Rows) { // past Rows, at the bottom either way
		s.index()
	}
	if col := v % cols; col == cols-1 {
		s.Col, s.Cur = uint16(col), s.Cur|curWrap
	} else {
		s.Col, s.Cur = uint16(col+1), s.Cur&^curWrap
	}
}

// index is LF or IND: down a row, scrolling at the region's bottom.
func (s *State) index() {
	if s.Cur&curRow == 0 {
		return
	}
	if s.RegionOdd || s.margined() {
		s.Cur &^= curRow // where the region stops it is the screen's
		return
	}
	if int(s.Row) != s.Bottom && int(s.Row) < s.Rows-1 {
		s.Row++
	}
}

// reverseIndex is RI.
func (s *State) reverseIndex() {
	s.Cur &^= curWrap
	if s.RegionOdd || s.margined() {
		s.Cur &^= curRow
	}
	if s.Cur&curRow != 0 && int(s.Row) != s.Top && s.Row > 0 {
		s.Row--
	}
}

// tabStop says whether column c has a tab stop (known: the caller checked).
func (s *State) tabStop(c int) bool {
	if !s.TabsChanged {
		return c%8 == 0
	}
	return c < len(s.Tabs) && s.Tabs[c] != 0
}

// tabsKnown says the tab stops are known.
func (s *State) tabsKnown() bool {
	if !s.TabsChanged {
		return s.Tabs != tabsReset
	}
	return s.TabsKnown
}

// tabsReset, as Tabs while TabsChanged is false, says DECST8C reset the
// stops, which the screen package does not do: they are not known.
const tabsReset = "8"

// ht is HT: screen.tab, a line break with a wrap pending (curWrap is only
// set while autowrap is on), else a tab to the next stop.
func (s *State) ht() {
	if s.Cur&curWrap != 0 {
		s.index()
		s.Col, s.Cur = 0, s.Cur&^(curWrap|curMax)|curCol
		return
	}
	s.tab(1)
}

// tab is CHT n (HT, n 1, without a wrap pending): to the next stop, or the
// last column.
func (s *State) tab(n int) {
	if s.Cur&curCol == 0 || !s.tabsKnown() {
		s.Cur &^= curCol | curMax // no wrap is pending then: the row stays
		return
	}
	if s.Cur&curWrap != 0 {
		return // screen.tabForward: no stop to go to, the wrap stays
	}
	c := int(s.Col)
	for ; n > 0 && c < s.Cols-1; n-- {
		c++
		for c < s.Cols-1 && !s.tabStop(c) {
			c++
		}
	}
	s.Col = uint16(c)
}

// backTab is CBT.
func (s *State) backTab(n int) {
	s.Cur &^= curWrap
	if s.Cur&curCol == 0 || !s.tabsKnown() {
		s.Cur &^= curCol | curMax
		return
	}
	c := int(s.Col)
	for ; n > 0 && c > 0; n-- {
		c--
		for c > 0 && !s.tabStop(c) {
			c--
		}
	}
	s.Col = uint16(c)
}

// setTab changes the stop at the cursor (HTS on, TBC 0 off), or clears
// them all (TBC 3). It comes before TabsChanged is set.
func (s *State) setTab(on, all bool) {
	if all {
		s.Tabs, s.TabsKnown = string(make([]byte, max(s.Cols, 1))), true
		return
	}
	if !s.TabsChanged {
		s.Tabs, s.TabsKnown = defaultTabs(s.Cols, ""), s.Tabs != tabsReset
	}
	if !s.TabsKnown {
		return
	}
	if s.Cur&curCol == 0 || int(s.Col) >= len(s.Tabs) {
		s.TabsKnown, s.Tabs = false, ""
		return
	}
	t := []byte(s.Tabs)
	t[s.Col] = 0
	if on {
		t[s.Col] = 1
	}
	s.Tabs = string(t)
}

// defaultTabs is a stop every 8 columns over cols columns, then those of
// old over them.
func defaultTabs(cols int, old string) string {
	t := make([]byte, max(cols, 1))
	for i := 0; i < len(t); i += 8 {
		t[i] = 1
	}
	copy(t, old)
	return string(t)
}

// TabStops reports the tab stops where the tracker knows them.
func (s *State) TabStops() (stops []int, ok bool) {
	if !s.tabsKnown() {
		return nil, false
	}
	for c := 0; c < s.Cols; c++ {
		if s.tabStop(c) {
			stops = append(stops, c)
		}
	}
	return stops, true
}

// resizeTabs keeps the stops over a width change, the new columns with
// the default ones (screen.Resize).
func (s *State) resizeTabs(cols int) {
	if s.TabsChanged && s.TabsKnown {
		s.Tabs = defaultTabs(cols, s.Tabs[:min(len(s.Tabs), cols)])
	}
}

// moveTo is CUP: row and col 0-based, from the region's top and the left
// margin in origin mode, as screen.moveTo.
func (s *State) moveTo(row, col int) {
	if s.RegionOdd && s.Private&bitOrigin != 0 {
		s.Cur = 0
		return
	}
	lo, hi := 0, s.Rows-1
	clo, chi := 0, s.Cols-1
	if s.Private&bitOrigin != 0 {
		lo, hi = s.Top, s.Bottom
		row += s.Top
		clo, chi = s.Margins()
		col += clo
	}
	s.setCursor(clampInt(row, lo, hi), clampInt(col, clo, chi))
}

func clampInt(v, lo, hi int) int { return max(lo, min(v, hi)) }

// cursorCSI applies what a CSI without a private marker or intermediate
// does to the cursor, its parameters p (0: the default).
func (s *State) cursorCSI(final byte, p []int) {
	param := func(i, def int) int {
		if i < len(p) && p[i] > 0 {
			return p[i]
		}
		return def
	}
	n := param(0, 1)
	known := func(bits uint8) bool { return s.Cur&bits == bits }
	if s.RegionOdd {
		switch final {
		case 'A', 'B', 'E', 'F', 'L', 'M':
			s.Cur &^= curRow // where the screen's region stops it
		}
	}
	switch final {
	case 'H', 'f':
		s.moveTo(param(0, 1)-1, param(1, 1)-1)
	case 'A', 'F':
		if known(curRow) {
			lo := 0
			if int(s.Row) >= s.Top {
				lo = s.Top
			}
			s.Row = uint16(clampInt(int(s.Row)-n, lo, s.Rows-1))
		}
		s.Cur &^= curWrap
	case 'B', 'E':
		if known(curRow) {
			hi := s.Rows - 1
			if int(s.Row) <= s.Bottom {
				hi = s.Bottom
			}
			s.Row = uint16(clampInt(int(s.Row)+n, 0, hi))
		}
		s.Cur &^= curWrap
	case 'C', 'a':
		if known(curCol) && !s.margined() {
			s.Col = uint16(clampInt(int(s.Col)+n, 0, s.Cols-1))
		} else {
			s.Cur &^= curCol | curMax
		}
		s.Cur &^= curWrap
	case 'D':
		if known(curCol) && !s.margined() {
			s.Col = uint16(clampInt(int(s.Col)-n, 0, s.Cols-1))
		} else {
			s.Cur &^= curCol | curMax
		}
		s.Cur &^= curWrap
	case 'G', '`':
		col := n - 1
		if s.Private&bitOrigin != 0 {
			left, right := s.Margins()
			col = clampInt(col+left, left, right)
		}
		s.Col, s.Cur = uint16(clampInt(col, 0, s.Cols-1)), s.Cur&^(curWrap|curMax)|curCol
	case 'd', 'e':
		// VPA, and VPR from the row the cursor is on: CUP's rule for the
		// row (the screen's edge; the region in origin mode, counted
		// from its top), the column kept.
		row := n - 1
		if final == 'e' {
			if !known(curRow) {
				s.Cur &^= curWrap
				break
			}
			row = int(s.Row) + n
			if s.Private&bitOrigin != 0 {
				row -= s.Top
			}
		}
		bits := s.Cur & (curCol | curMax)
		col := int(s.Col)
		if s.Private&bitOrigin != 0 {
			left, _ := s.Margins()
			col -= left
		}
		s.moveTo(row, col)
		if s.Cur&curRow != 0 {
			s.Cur = curRow | bits
		}
	}
	if final == 'E' || final == 'F' { // and a CR
		s.Col, s.Cur = 0, s.Cur&^(curWrap|curMax)|curCol
		if s.margined() {
			s.Cur &^= curCol
		}
	}
	switch final {
	case 'I':
		s.tab(n)
	case 'Z':
		s.backTab(n)
	case 'L', 'M':
		switch {
		case !known(curRow) || s.margined():
			s.Cur &^= curCol | curMax | curWrap
		case int(s.Row) >= s.Top && int(s.Row) <= s.Bottom:
			s.Col, s.Cur = 0, s.Cur&^(curWrap|curMax)|curCol
		}
	case '@':
		s.Cur &^= curWrap
	case 'b':
		s.Cur = 0 // REP: the character repeated is text the tracker skipped
	case 'J', 'K', 'X', 'P', 'S', 'T':
		if s.Cur&curWrap != 0 {
			s.Cur = 0 // what they do to a pending wrap is the screen's
		}
	}
}

// cursorFinals are the finals of the CSIs cursorCSI handles.
var cursorFinals = func() (f [256]bool) {
	for _, c := range []byte("HfABCDEFGadeIZLM@bJKXPST`") {
		f[c] = true
	}
	return f
}()
