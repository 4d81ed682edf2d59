package screen

// originTop is the row that line 1 refers to: the region top in origin
// mode, the screen top otherwise.
func (s *Screen) originTop() int {
	if s.origin {
		return s.top
	}
	return 0
}

// originLeft is the column CUP's column 1 names: the left margin in
// origin mode.
func (s *Screen) originLeft() int {
	if s.origin {
		return s.left
	}
	return 0
}

// moveTo places the cursor at row, col (0-based), with row relative to
// the scroll region in origin mode. Every absolute move ends a pending wrap.
func (s *Screen) moveTo(row, col int) {
	lo, hi := 0, s.rows-1
	clo, chi := 0, s.cols-1
	if s.origin {
		lo, hi = s.top, s.bottom
		row += s.top
		clo, chi = s.left, s.right
		col += s.left
	}
	s.row = clamp(row, lo, hi)
	s.col = clamp(col, clo, chi)
	s.pendingWrap = false
}

// moveColOrigin is CHA/HPA: the column counts from the left margin in
// origin mode.
func (s *Screen) moveColOrigin(col int) {
	if s.origin {
		s.col = clamp(col+s.left, s.left, s.right)
		s.pendingWrap = false
		return
	}
	s.moveCol(col)
}

// cursorForward is CUF: it stops at the right margin when it starts
// inside the margins, at the screen edge otherwise.
func (s *Screen) cursorForward(n int) {
	hi := s.cols - 1
	if s.col <= s.right {
		hi = s.right
	}
	s.col = clamp(s.col+n, 0, hi)
	s.pendingWrap = false
}

// cursorBackward is CUB, the mirror of cursorForward.
func (s *Screen) cursorBackward(n int) {
	lo := 0
	if s.col >= s.left {
		lo = s.left
	}
	s.col = clamp(s.col-n, lo, s.cols-1)
	s.pendingWrap = false
}

// carriageReturn goes to the left margin, or to the first column when the
// cursor is already left of it.
func (s *Screen) carriageReturn() {
	if s.col >= s.left {
		s.col = s.left
	} else {
		s.col = 0
	}
	s.pendingWrap = false
}

// setMargins is DECSLRM (CSI Pl ; Pr s while DECLRMM is set); like
// DECSTBM it homes the cursor and ignores an empty range.
func (s *Screen) setMargins(left, right int) {
	left, right = left-1, right-1
	if right >= s.cols {
		right = s.cols - 1
	}
	if left < 0 || left >= right {
		return
	}
	s.left, s.right = left, right
	s.moveTo(0, 0)
}

// moveCol sets the column within the line.
func (s *Screen) moveCol(col int) {
	s.col = clamp(col, 0, s.cols-1)
	s.pendingWrap = false
}

// cursorUp stops at the top margin when starting inside the region, at
// the screen top otherwise.
func (s *Screen) cursorUp(n int) {
	lo := 0
	if s.row >= s.top {
		lo = s.top
	}
	s.row = clamp(s.row-n, lo, s.rows-1)
	s.pendingWrap = false
}

func (s *Screen) cursorDown(n int) {
	hi := s.rows - 1
	if s.row <= s.bottom {
		hi = s.bottom
	}
	s.row = clamp(s.row+n, 0, hi)
	s.pendingWrap = false
}

// index is IND/LF: down one line, scrolling the region at its bottom.
func (s *Screen) index() {
	switch {
	case s.row == s.bottom && s.insideMargins():
		s.scrollUp(s.top, s.bottom, 1)
	case s.row < s.rows-1:
		s.row++
	}
}

// reverseIndex is RI: up one line, scrolling the region down at its top.
func (s *Screen) reverseIndex() {
	s.pendingWrap = false
	switch {
	case s.row == s.top && s.insideMargins():
		s.scrollDown(s.top, s.bottom, 1)
	case s.row > 0:
		s.row--
	}
}

func (s *Screen) setRegion(top, bottom int) {
	top, bottom = top-1, bottom-1
	if bottom >= s.rows {
		bottom = s.rows - 1
	}
	if top < 0 || top >= bottom {
		return // invalid regions are ignored, as on a VT100
	}
	s.top, s.bottom = top, bottom
	s.moveTo(0, 0)
}

func (s *Screen) saveCursor() {
	s.cur.saved = cursorState{
		row: s.row, col: s.col, pen: s.pen, pendingWrap: s.pendingWrap,
		charsets: s.charsets, gl: s.gl, valid: true,
	}
}

// restoreCursor is DECRC; with nothing saved it homes the cursor and
// resets the pen, as xterm does. Origin mode (DECOM) is left as it is:
// alacritty, which interminai's xterm mode runs, saves no modes with the
// cursor, and neither does xterm.js (xterm and DEC restore it).
func (s *Screen) restoreCursor() {
	c := s.cur.saved
	if !c.valid {
		c = cursorState{}
	}
	s.pen = c.pen
	s.charsets = c.charsets
	s.gl = c.gl
	s.row = clamp(c.row, 0, s.rows-1)
	s.col = clamp(c.col, 0, s.cols-1)
	if s.origin {
		s.row = clamp(s.row, s.top, s.bottom)
		s.col = clamp(s.col, s.left, s.right)
	}
	s.pendingWrap = c.pendingWrap && s.col == s.cols-1
}

// tab is HT. With a wrap pending it is a line break, as in alacritty
// (interminai's xterm mode: put_tab wraps the line and stops there): the
// text after it starts the next row, and so does the cursor, so a CR after
// it returns to that row. With autowrap off the cursor stays and so does
// the wrap. (xterm.js and tmux leave the cursor and the pending wrap as
// they were, which puts the text after it in the same place.)
func (s *Screen) tab() {
	if s.pendingWrap && s.col == s.cols-1 {
		if s.autowrap {
			s.wrap()
		}
		return
	}
	s.tabForward(1)
}

// tabForward is CHT.
func (s *Screen) tabForward(n int) {
	if s.pendingWrap && s.col == s.cols-1 {
		// There is no stop to go to: the cursor stays, and so does the
		// pending wrap, so the next character still starts a new line (as
		// alacritty, xterm.js and tmux).
		return
	}
	s.pendingWrap = false
	for ; n > 0 && s.col < s.cols-1; n-- {
		s.col++
		for s.col < s.cols-1 && !s.tabs[s.col] {
			s.col++
		}
	}
}

func (s *Screen) tabBackward(n int) {
	s.pendingWrap = false
	for ; n > 0 && s.col > 0; n-- {
		s.col--
		for s.col > 0 && !s.tabs[s.col] {
			s.col--
		}
	}
}

// clearTabs is TBC: 0 clears the stop at the cursor, 3 clears all.
func (s *Screen) clearTabs(mode int) {
	switch mode {
	case 0:
		s.tabs[s.col] = false
	case 3:
		for i := range s.tabs {
			s.tabs[i] = false
		}
	default:
		s.recordUnhandled()
	}
}

func defaultTabs(cols int) []bool { return resetTabs(nil, cols) }

// resetTabs sets a stop every 8 columns, reusing t's storage if it fits.
func resetTabs(t []bool, cols int) []bool {
	if cap(t) >= cols {
		t = t[:cols]
		clear(t)
	} else {
		t = make([]bool, cols)
	}
	// Every 8 columns from the first, as xterm and xterm.js (the first
	// is never a tab's destination, but TBC and a repaint see it).
	for i := 0; i < cols; i += 8 {
		t[i] = true
	}
	return t
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
