package screen

// mark is a position tracked through a reflow: a logical line and a cell
// offset within it, then the row and column it lands on.
type mark struct {
	line, off int
	row, col  int
	pending   bool // the position is one past the last column (a pending wrap)
}

// reflowMain re-wraps the scrollback and the main screen at cols and
// lays them out in rows. The rows of the old screen that are blank below
// both the cursor and the last written row are not kept as lines: they
// are the room a narrower screen grows into. Whatever ends up above the
// screen becomes the scrollback, oldest lines dropped past its capacity.
func (s *Screen) reflowMain(cols, rows int) {
	b := s.main
	oldCols := s.cols

	// The position to keep: the cursor, or on the alternate screen the
	// main screen's saved cursor (where ?1049l will put it back).
	curRow, curCol, curPending := s.row, s.col, s.pendingWrap
	if s.altActive {
		curRow, curCol, curPending = b.saved.row, b.saved.col, b.saved.pendingWrap
	}
	savedRow, savedCol := b.saved.row, b.saved.col

	// Physical rows, oldest first: scrollback then screen (up to the last
	// row that matters).
	type prow struct {
		cells   []cell
		wrapped bool
	}
	last := max(curRow, savedRow)
	for r := s.rows - 1; r > last; r-- {
		if !rowBlank(b.lines[r]) {
			last = r
			break
		}
	}
	n := s.scroll.len()
	phys := make([]prow, 0, n+last+1)
	for i := n; i >= 1; i-- {
		phys = append(phys, prow{s.scroll.at(i), s.scroll.wrappedAt(i)})
	}
	for r := 0; r <= last; r++ {
		phys = append(phys, prow{b.lines[r], b.wrapped[r] && r < last})
	}

	// Join into logical lines, noting where the tracked marks fall.
	var lines [][]cell
	firstScreenLine := -1
	marks := []*mark{{}, {}}
	var cur []cell
	for i, p := range phys {
		screenRow := i - n
		if screenRow == 0 {
			firstScreenLine = len(lines)
		}
		for k, pos := range [2][2]int{{curRow, curCol}, {savedRow, savedCol}} {
			if screenRow == pos[0] {
				off := pos[1]
				if k == 0 && curPending {
					off++
				}
				marks[k].line, marks[k].off = len(lines), len(cur)+off
			}
		}
		cells := p.cells
		if p.wrapped {
			cells = cells[:min(len(cells), oldCols)]
			if k := len(cells); k > 0 && cells[k-1].flags&flagWrapPad != 0 {
				cells = cells[:k-1]
			}
			cur = appendUnpadded(cur, cells)
			continue
		}
		end := len(cells)
		for end > 0 && cells[end-1].isDefaultBlank() {
			end--
		}
		cur = appendUnpadded(cur, cells[:end])
		lines = append(lines, cur)
		cur = nil
	}
	if cur != nil {
		lines = append(lines, cur)
	}
	if firstScreenLine < 0 {
		firstScreenLine = len(lines)
	}

	// Re-wrap every logical line at the new width.
	var outRows [][]cell
	var outWrapped []bool
	firstScreenRow := 0
	for li, l := range lines {
		if li == firstScreenLine {
			firstScreenRow = len(outRows)
		}
		start := len(outRows)
		row := make([]cell, cols)
		col := 0
		place := func(off int) {
			for _, m := range marks {
				if m.line == li && m.off == off {
					m.row, m.col = len(outRows)-start, col
				}
			}
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			w := 1
			if c.flags&flagWideLead != 0 && i+1 < len(l) && l[i+1].flags&flagWideTrail != 0 && cols >= 2 {
				w = 2
			} else if c.flags&(flagWideLead|flagWideTrail) != 0 {
				c = blankCell(c.bg) // a half without its other half
			}
			if col+w > cols {
				if w == 2 && col < cols {
					row[col] = cell{attrs: attrs{bg: c.bg, flags: flagWrapPad}}
				}
				outRows = append(outRows, row)
				outWrapped = append(outWrapped, true)
				row, col = make([]cell, cols), 0
			}
			place(i)
			if w == 2 {
				for _, m := range marks {
					if m.line == li && m.off == i+1 {
						m.row, m.col = len(outRows)-start, col+1
					}
				}
				row[col], row[col+1] = c, l[i+1]
				i++
			} else {
				row[col] = c
			}
			col += w
		}
		// Marks past the end of the text (the cursor after the last
		// character, or out in the blanks) keep their distance from it on
		// the last row, up to the margin.
		for _, m := range marks {
			if m.line == li && m.off >= len(l) {
				m.row, m.col = len(outRows)-start, min(col+m.off-len(l), cols)
			}
		}
		outRows = append(outRows, row)
		outWrapped = append(outWrapped, false)
		for _, m := range marks {
			if m.line == li {
				m.row += start
			}
		}
	}
	if firstScreenLine >= len(lines) {
		firstScreenRow = len(outRows)
	}

	// Choose the screen. The old screen's rows, reflowed, stay on it;
	// when they take fewer rows than before (a wider screen) as many rows
	// come back from the scrollback, so narrowing and widening again
	// round-trips; when they no longer fit, the top ones go to the
	// scrollback. Text is never dropped to keep the cursor's row: if the
	// rows below the cursor alone overflow the screen, the cursor goes to
	// the top left corner, as in tmux.
	oldUsed := last + 1
	newUsed := len(outRows) - firstScreenRow
	top := firstScreenRow - max(0, oldUsed-newUsed)
	top = max(top, len(outRows)-rows, marks[0].row-(rows-1), 0)
	screen := make([][]cell, rows)
	wrapped := make([]bool, rows)
	for r := range screen {
		if top+r < len(outRows) {
			screen[r], wrapped[r] = outRows[top+r], outWrapped[top+r]
		} else {
			screen[r] = make([]cell, cols)
		}
	}
	wrapped[rows-1] = false

	s.scroll.clear()
	for i := max(0, top-s.scroll.capacity); i < top; i++ {
		s.scroll.push(outRows[i], outWrapped[i])
	}
	b.lines, b.wrapped, b.base = screen, wrapped, 0

	place := func(m *mark, pending bool) (int, int, bool) {
		r, c := m.row-top, m.col
		if r < 0 {
			return 0, 0, false
		}
		p := false
		if c >= cols {
			c, p = cols-1, pending && s.autowrap
		}
		return clamp(r, 0, rows-1), clamp(c, 0, cols-1), p
	}
	cr, cc, cp := place(marks[0], curPending)
	if s.altActive {
		b.saved.row, b.saved.col, b.saved.pendingWrap = cr, cc, cp
	} else {
		s.row, s.col, s.pendingWrap = cr, cc, cp
		b.saved.row, b.saved.col, _ = place(marks[1], false)
	}
}

// appendUnpadded appends cells to l as plain blanks where an editing
// operation moved a wrap pad away from the end of its row: only a pad
// ending a wrapped row is dropped, and only by the join above.
func appendUnpadded(l, cells []cell) []cell {
	n := len(l)
	l = append(l, cells...)
	for i := n; i < len(l); i++ {
		l[i].flags &^= flagWrapPad
	}
	return l
}

// rowBlank reports whether a row has nothing drawn on it.
func rowBlank(l []cell) bool {
	for _, c := range l {
		if !c.isDefaultBlank() {
			return false
		}
	}
	return true
}
