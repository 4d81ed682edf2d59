package screen

// hardReset is RIS (ESC c): everything back to power-on state except the
// scrollback and the unhandled ring, which are the caller's history.
func (s *Screen) hardReset() {
	if s.altActive {
		s.cur = s.main
		s.altActive = false
	}
	s.clearBuffer(s.main)
	s.clearBuffer(s.alt)
	s.main.saved = cursorState{}
	s.alt.saved = cursorState{}
	s.row, s.col, s.pendingWrap = 0, 0, false
	s.pen = attrs{}
	s.lastPrinted = 0
	s.top, s.bottom = 0, s.rows-1
	s.left, s.right, s.lrmm = 0, s.cols-1, false
	s.colors = colorTable{}
	s.tabs = resetTabs(s.tabs, s.cols)
	s.autowrap = true
	s.origin = false
	s.insert = false
	s.newline = false
	s.cursorVisible = true
	s.appCursor = false
	s.appKeypad = false
	s.bracketed = false
	s.cursorStyle = 0
	clear(s.inert)
	s.charsets = [2]charset{}
	s.gl = 0
	s.title = ""
	s.titles = s.titles[:0]
}

// softReset is DECSTR (CSI ! p): modes and pen reset, screen content and
// cursor position kept.
func (s *Screen) softReset() {
	s.cursorVisible = true
	s.insert = false
	s.origin = false
	s.autowrap = true
	s.appCursor = false
	s.appKeypad = false
	s.top, s.bottom = 0, s.rows-1
	s.left, s.right = 0, s.cols-1
	s.charsets = [2]charset{}
	s.gl = 0
	s.pen = attrs{}
	s.pendingWrap = false
	s.cur.saved = cursorState{}
}

// Resize changes the screen size. Content that fits is kept; when rows
// shrink below the cursor, lines leave from the top (into the scrollback
// on the main screen) so the cursor stays on its line, as in xterm.
func (s *Screen) Resize(cols, rows int) {
	cols, rows = clampSize(cols, rows)
	if cols == s.cols && rows == s.rows {
		return
	}
	s.main.linear()
	s.alt.linear()
	// Shift out lines above the cursor if the cursor would fall off.
	if shift := s.row - (rows - 1); shift > 0 {
		if !s.altActive {
			for i := 0; i < shift; i++ {
				s.scroll.push(s.main.lines[i])
			}
		}
		s.cur.lines = s.cur.lines[shift:]
		s.row -= shift
	}
	s.main.lines = resizeLines(s.main.lines, cols, rows)
	s.alt.lines = resizeLines(s.alt.lines, cols, rows)
	if s.altActive {
		s.cur = s.alt
	} else {
		s.cur = s.main
	}
	s.cols, s.rows = cols, rows
	s.row = clamp(s.row, 0, rows-1)
	s.col = clamp(s.col, 0, cols-1)
	s.pendingWrap = false
	s.top, s.bottom = 0, rows-1
	s.left, s.right = 0, cols-1
	for _, b := range []*buffer{s.main, s.alt} {
		b.saved.row = clamp(b.saved.row, 0, rows-1)
		b.saved.col = clamp(b.saved.col, 0, cols-1)
	}
	tabs := defaultTabs(cols)
	copy(tabs, s.tabs)
	s.tabs = tabs
}

// resizeLines returns lines with exactly rows lines of cols cells.
func resizeLines(lines [][]cell, cols, rows int) [][]cell {
	if len(lines) > rows {
		lines = lines[:rows]
	}
	out := make([][]cell, rows)
	for i := range out {
		var l []cell
		if i < len(lines) {
			l = lines[i]
		}
		switch {
		case l == nil:
			l = make([]cell, cols)
		case len(l) > cols:
			l = l[:cols:cols]
			// A wide character cut in half at the new margin becomes blank.
			if l[cols-1].flags&flagWideLead != 0 {
				l[cols-1] = blankCell(l[cols-1].bg)
			}
		case len(l) < cols:
			l = append(l, make([]cell, cols-len(l))...)
		}
		out[i] = l
	}
	return out
}
