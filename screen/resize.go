package screen

// Resize changes the screen size. When the width changes, the main
// screen and its scrollback are reflowed: rows that were soft-wrapped
// (left by autowrap) are re-joined into logical lines and wrapped again
// at the new width, as xterm.js and tmux do, and the cursor (and the
// cursor saved by DECSC/?1049) stays on its character. The alternate
// screen is not reflowed: full-screen programs redraw it on SIGWINCH, so
// it is cut or padded. When only the height changes, lines leave from the
// top (into the scrollback on the main screen) if the cursor would fall
// off, as in xterm. A taller main screen takes back as many of the most
// recent scrollback lines as it gained rows, and its cursors move down
// with them, as in alacritty (interminai's xterm mode: grid/resize.rs
// grow_lines), tmux and, with the cursor on the bottom row, xterm.js.
// A wrap pending stays pending while the cursor stays in the last column,
// as in alacritty.
func (s *Screen) Resize(cols, rows int) {
	cols, rows = clampSize(cols, rows)
	if cols == s.cols && rows == s.rows {
		return
	}
	s.main.linear()
	s.alt.linear()
	if cols != s.cols {
		s.reflowMain(cols, rows)
	} else {
		s.resizeRows(rows)
	}
	if shift := s.row - (rows - 1); s.altActive && shift > 0 {
		// Keep the cursor on its line: rows leave the alternate screen
		// from the top (not into the scrollback).
		s.alt.lines = s.alt.lines[shift:]
		s.row -= shift
	}
	s.alt.lines = resizeLines(s.alt.lines, cols, rows)
	s.alt.wrapped = make([]bool, rows)
	if s.altActive {
		s.cur = s.alt
		s.row = clamp(s.row, 0, rows-1)
		// A wrap pending stays pending where the cursor is still in the
		// last column (the height alone changed, or the width shrank past
		// it), as in alacritty, whose cursor keeps it through a resize of
		// the alternate screen: the next character starts the next row.
		s.pendingWrap = s.pendingWrap && s.col >= cols-1
		s.col = clamp(s.col, 0, cols-1)
	} else {
		s.cur = s.main
	}
	s.cols, s.rows = cols, rows
	s.top, s.bottom = 0, rows-1
	s.left, s.right = 0, cols-1
	s.alt.saved.row = clamp(s.alt.saved.row, 0, rows-1)
	s.alt.saved.col = clamp(s.alt.saved.col, 0, cols-1)
	tabs := defaultTabs(cols)
	copy(tabs, s.tabs)
	s.tabs = tabs
}

// resizeRows changes only the height of the main screen.
func (s *Screen) resizeRows(rows int) {
	b := s.main
	row := &b.saved.row
	if !s.altActive {
		row = &s.row
	}
	// Shift out lines above the cursor if the cursor would fall off.
	if shift := *row - (rows - 1); shift > 0 {
		s.scrolledOff += shift
		for i := 0; i < shift; i++ {
			s.scroll.push(b.lines[i], b.wrapped[i])
		}
		b.lines = b.lines[shift:]
		b.wrapped = b.wrapped[shift:]
		*row -= shift
	}
	// Take lines back from the scrollback for the rows gained.
	if pull := min(rows-s.rows, s.scroll.len()); pull > 0 {
		lines, wrapped := s.scroll.takeNewest(pull, s.cols)
		b.lines = append(lines, b.lines...)
		b.wrapped = append(wrapped, b.wrapped...)
		*row += pull
		if !s.altActive {
			b.saved.row += pull
		}
		// They are on the screen again: a mark's absolute line
		// (ScrolledOff plus the row) still names its line.
		s.scrolledOff = max(0, s.scrolledOff-pull)
	}
	b.lines = resizeLines(b.lines, s.cols, rows)
	w := make([]bool, rows)
	copy(w, b.wrapped)
	w[rows-1] = false
	b.wrapped = w
	*row = clamp(*row, 0, rows-1)
	// The width is the same, so the cursor's column is, and a wrap
	// pending stays pending (alacritty's cursor keeps it through a resize;
	// xterm.js drops it, and the next character then overwrote the last
	// column instead of starting the next row).
	b.saved.row = clamp(b.saved.row, 0, rows-1)
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
