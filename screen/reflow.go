package screen

// mark is a position tracked through a reflow: a logical line and a cell
// offset within it, then the row (counted over all re-wrapped rows) and
// column it lands on.
type mark struct {
	line, off int
	row, col  int
}

// reflowMain re-wraps the scrollback and the main screen at cols and
// lays them out in rows. The rows of the old screen that are blank below
// both the cursor and the last written row are not kept as lines: they
// are the room a narrower screen grows into. Whatever ends up above the
// screen becomes the scrollback, oldest lines dropped past its capacity.
func (s *Screen) reflowMain(cols, rows int) {
	b := s.main
	// The position to keep: the cursor, or on the alternate screen the
	// main screen's saved cursor (where ?1049l will put it back).
	cur := cursorState{row: s.row, col: s.col, pendingWrap: s.pendingWrap}
	if s.altActive {
		cur = b.saved
	}
	last := max(cur.row, b.saved.row)
	for r := s.rows - 1; r > last; r-- {
		if !rowBlank(b.lines[r]) {
			last = r
			break
		}
	}
	curOff := cur.col
	if cur.pendingWrap {
		curOff++ // the cursor is after the last column's character
	}
	marks := []*mark{{}, {}} // the cursor, the main screen's saved cursor
	lines, firstScreenLine := s.logicalLines(last, [2][2]int{{cur.row, curOff}, {b.saved.row, b.saved.col}}, marks)
	out, outWrapped, firstScreenRow := rewrap(lines, cols, firstScreenLine, marks)

	// Choose the screen. The old screen's rows, reflowed, stay on it;
	// when they take fewer rows than before (a wider screen) as many rows
	// come back from the scrollback, so narrowing and widening again
	// round-trips; when they no longer fit, the top ones go to the
	// scrollback. Text is never dropped to keep the cursor's row: if the
	// rows below the cursor alone overflow the screen, the cursor goes to
	// the top left corner, as in tmux.
	// A taller screen takes back as many lines as it gained rows (see
	// Resize).
	oldUsed := last + 1
	newUsed := len(out) - firstScreenRow
	top := firstScreenRow - max(0, oldUsed-newUsed) - max(0, rows-s.rows)
	top = max(top, len(out)-rows, marks[0].row-(rows-1), 0)
	screen := make([][]cell, rows)
	wrapped := make([]bool, rows)
	for r := range screen {
		if top+r < len(out) {
			screen[r], wrapped[r] = out[top+r], outWrapped[top+r]
		} else {
			screen[r] = make([]cell, cols)
		}
	}
	wrapped[rows-1] = false
	s.scroll.clear()
	for i := max(0, top-s.scroll.capacity); i < top; i++ {
		s.scroll.push(out[i], outWrapped[i])
	}
	b.lines, b.wrapped, b.base = screen, wrapped, 0

	place := func(m *mark, pending bool) (int, int, bool) {
		r, c := m.row-top, m.col
		if r < 0 {
			return 0, 0, false
		}
		p := false
		if c >= cols {
			c, p = cols-1, pending
		}
		return clamp(r, 0, rows-1), clamp(c, 0, cols-1), p
	}
	cr, cc, cp := place(marks[0], cur.pendingWrap)
	if s.altActive {
		b.saved.row, b.saved.col, b.saved.pendingWrap = cr, cc, cp
	} else {
		s.row, s.col, s.pendingWrap = cr, cc, cp
		b.saved.row, b.saved.col, _ = place(marks[1], false)
	}
}

// logicalLines joins the scrollback and main screen rows 0..last into
// logical lines (soft-wrapped rows re-joined, the pad a wrapped wide
// character left dropped, trailing blanks of each line trimmed) and sets
// each mark from its screen (row, column) position. It also returns the
// index of the line holding the first screen row.
func (s *Screen) logicalLines(last int, pos [2][2]int, marks []*mark) ([][]cell, int) {
	b := s.main
	n := s.scroll.len()
	var lines [][]cell
	firstScreenLine := -1
	var cur []cell
	for i := 0; i < n+last+1; i++ {
		var cells []cell
		var wrapped bool
		if i < n {
			cells, wrapped = s.scroll.at(n-i), s.scroll.wrappedAt(n-i)
		} else {
			r := i - n
			cells, wrapped = b.lines[r], b.wrapped[r] && r < last
			if r == 0 {
				firstScreenLine = len(lines)
			}
			for k, p := range pos {
				if r == p[0] {
					marks[k].line, marks[k].off = len(lines), len(cur)+p[1]
				}
			}
		}
		if wrapped {
			cells = cells[:min(len(cells), s.cols)]
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
		lines = append(lines, appendUnpadded(cur, cells[:end]))
		cur = nil
	}
	if cur != nil {
		lines = append(lines, cur)
	}
	if firstScreenLine < 0 {
		firstScreenLine = len(lines)
	}
	return lines, firstScreenLine
}

// rewrap lays logical lines out in rows of cols cells. A wide character
// that does not fit the rest of a row leaves a pad and moves whole to the
// next. Marks move to the row and column of their cell; a mark past the
// end of its line's text keeps its distance from the end, up to the
// margin. It also returns the first row of line firstLine.
func rewrap(lines [][]cell, cols, firstLine int, marks []*mark) (out [][]cell, wrapped []bool, firstRow int) {
	firstRow = -1
	for li, l := range lines {
		if li == firstLine {
			firstRow = len(out)
		}
		row, col := make([]cell, cols), 0
		placeAt := func(off, col int) {
			for _, m := range marks {
				if m.line == li && m.off == off {
					m.row, m.col = len(out), col
				}
			}
		}
		for i := 0; i < len(l); i++ {
			c, w := l[i], 1
			if c.flags&flagWideLead != 0 && i+1 < len(l) && l[i+1].flags&flagWideTrail != 0 && cols >= 2 {
				w = 2
			} else if c.flags&(flagWideLead|flagWideTrail) != 0 {
				c = blankCell(c.bg) // a half without its other half
			}
			if col+w > cols {
				if w == 2 && col < cols {
					row[col] = cell{attrs: attrs{bg: c.bg, flags: flagWrapPad}}
				}
				out, wrapped = append(out, row), append(wrapped, true)
				row, col = make([]cell, cols), 0
			}
			placeAt(i, col)
			row[col] = c
			if w == 2 {
				placeAt(i+1, col+1)
				row[col+1] = l[i+1]
				i++
			}
			col += w
		}
		for _, m := range marks {
			if m.line == li && m.off >= len(l) {
				m.row, m.col = len(out), min(col+m.off-len(l), cols)
			}
		}
		out, wrapped = append(out, row), append(wrapped, false)
	}
	if firstRow < 0 {
		firstRow = len(out)
	}
	return out, wrapped, firstRow
}

// appendUnpadded appends cells to l as plain blanks where an editing
// operation moved a wrap pad away from the end of its row: only a pad
// ending a wrapped row is dropped, and only by logicalLines.
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
