package screen

// fill blanks cells [from, to) of line with the current background.
func (s *Screen) fill(line []cell, from, to int) {
	if from < 0 {
		from = 0
	}
	if to > len(line) {
		to = len(line)
	}
	if from >= to {
		return
	}
	// Erasing half of a wide character erases all of it.
	s.clearWideAt(line, from)
	s.clearWideAt(line, to-1)
	seg := line[from:to]
	if s.pen.bg == colorDefault {
		clear(seg) // the zero cell is the default blank: a memclr
		return
	}
	seg[0] = blankCell(s.pen.bg)
	for n := 1; n < len(seg); n *= 2 {
		copy(seg[n:], seg[:n])
	}
}

// eraseDisplay is ED: 0 below, 1 above, 2 all, 3 scrollback.
func (s *Screen) eraseDisplay(mode int) {
	switch mode {
	case 0:
		s.fill(s.line(s.row), s.eraseFrom(), s.cols)
		s.cur.setWrapped(s.row, false)
		for r := s.row + 1; r < s.rows; r++ {
			s.fill(s.line(r), 0, s.cols)
			s.cur.setWrapped(r, false)
		}
	case 1:
		for r := 0; r < s.row; r++ {
			s.fill(s.line(r), 0, s.cols)
			s.cur.setWrapped(r, false)
		}
		s.fill(s.line(s.row), 0, s.col+1)
	case 2:
		if s.clearPushes && !s.altActive {
			s.saveUsedRows()
		}
		for r := 0; r < s.rows; r++ {
			s.fill(s.line(r), 0, s.cols)
			s.cur.setWrapped(r, false)
		}
	case 3:
		s.scroll.clear()
	default:
		s.recordUnhandled()
	}
}

// saveUsedRows copies the main screen's rows, from the top down to the
// last one with anything on it, into the scrollback, as if they had
// scrolled off (Options.ClearToScrollback): blank rows between them go
// too, blank rows below the last do not.
func (s *Screen) saveUsedRows() {
	used := 0
	for r := s.rows - 1; r >= 0 && used == 0; r-- {
		for _, c := range s.line(r) {
			if !c.isDefaultBlank() {
				used = r + 1
				break
			}
		}
	}
	s.scrolledOff += used
	for r := 0; r < used && s.scroll.capacity > 0; r++ {
		s.scroll.push(s.line(r), s.cur.isWrapped(r))
	}
}

// eraseLine is EL: 0 to the right, 1 to the left, 2 the whole line.
func (s *Screen) eraseLine(mode int) {
	line := s.line(s.row)
	switch mode {
	case 0:
		s.fill(line, s.eraseFrom(), s.cols)
	case 1:
		s.fill(line, 0, s.col+1)
	case 2:
		s.fill(line, 0, s.cols)
	default:
		s.recordUnhandled()
	}
}

// eraseChars is ECH: blank n cells from the cursor without moving. With
// a wrap pending it starts at the cursor's column, the last one, whose
// character goes (alacritty's erase_chars, which interminai's xterm mode
// runs, interminai's own emulator, xterm and xterm.js all erase it); the
// wrap stays pending, as in alacritty.
func (s *Screen) eraseChars(n int) {
	s.fill(s.line(s.row), s.col, s.col+n)
}

// eraseFrom is the first column EL 0 and ED 0 touch: in the pending-wrap
// state the cursor is past the last character, so that character stays
// (xterm.js and tmux agree; alacritty's EL 0 erases nothing then). ECH
// does not use it.
func (s *Screen) eraseFrom() int {
	if s.pendingWrap {
		return s.col + 1
	}
	return s.col
}

// cutAt blanks a wide character that straddles the boundary before
// column c, because an operation is about to move or drop the cells on
// one side of that boundary: half a character must never survive.
func cutAt(line []cell, c int) {
	if c <= 0 || c >= len(line) || line[c].flags&flagWideTrail == 0 {
		return
	}
	line[c] = blankCell(line[c].bg)
	if line[c-1].flags&flagWideLead != 0 {
		line[c-1] = blankCell(line[c-1].bg)
	}
}

// blankRange sets cells [from, to) to the erased cell without the
// wide-character fix-ups of fill: the caller has already cut at both ends.
func (s *Screen) blankRange(line []cell, from, to int) {
	seg := line[from:to]
	if s.pen.bg == colorDefault {
		clear(seg)
		return
	}
	for i := range seg {
		seg[i] = blankCell(s.pen.bg)
	}
}

// insideMargins reports whether the cursor column is within the left and
// right margins: ICH, DCH, IL and DL do nothing outside them (xterm).
func (s *Screen) insideMargins() bool { return s.col >= s.left && s.col <= s.right }

// insertBlanks is ICH (and IRM): shift the cells from the cursor to the
// right margin right by n; cells pushed past the margin are lost. A wide
// character under the cursor moves whole; one cut by the cursor (cursor on
// its right half) or pushed half past the margin is blanked, as xterm.js
// does.
func (s *Screen) insertBlanks(n int) {
	s.pendingWrap = false
	if !s.insideMargins() {
		return
	}
	line := s.line(s.row)
	end := s.right + 1
	if n > end-s.col {
		n = end - s.col
	}
	if n <= 0 {
		return
	}
	cutAt(line, s.col)
	cutAt(line, end-n)
	cutAt(line, end)
	copy(line[s.col+n:end], line[s.col:end-n])
	s.blankRange(line, s.col, s.col+n)
}

// deleteChars is DCH: shift the cells right of the deleted ones left up
// to the right margin; blanks enter at the margin.
func (s *Screen) deleteChars(n int) {
	s.pendingWrap = false
	if !s.insideMargins() {
		return
	}
	line := s.line(s.row)
	end := s.right + 1
	if n > end-s.col {
		n = end - s.col
	}
	if n <= 0 {
		return
	}
	cutAt(line, s.col)
	cutAt(line, s.col+n)
	cutAt(line, end)
	copy(line[s.col:end-n], line[s.col+n:end])
	s.blankRange(line, end-n, end)
}

// insertLines is IL: only inside the scroll region; the cursor goes to
// the first column.
func (s *Screen) insertLines(n int) {
	if s.row < s.top || s.row > s.bottom || !s.insideMargins() {
		return
	}
	s.scrollDown(s.row, s.bottom, n)
	s.col, s.pendingWrap = s.left, false
}

func (s *Screen) deleteLines(n int) {
	if s.row < s.top || s.row > s.bottom || !s.insideMargins() {
		return
	}
	s.scrollUpNoSave(s.row, s.bottom, n)
	s.col, s.pendingWrap = s.left, false
}

// fullWidth reports whether the left and right margins are the screen
// edges, so scrolling can move whole rows.
func (s *Screen) fullWidth() bool { return s.left == 0 && s.right == s.cols-1 }

// scrollUp moves lines top..bottom up by n. Lines leaving the top of the
// main screen go to the scrollback, but only when the region starts at
// the first line: a status bar under a fixed header is not history.
func (s *Screen) scrollUp(top, bottom, n int) {
	if top == 0 && !s.altActive && s.fullWidth() {
		h := bottom - top + 1
		if n > h {
			n = h
		}
		s.scrolledOff += n
		for i := 0; i < n && s.scroll.capacity > 0; i++ {
			s.scroll.push(s.line(top+i), s.cur.isWrapped(top+i))
		}
	}
	s.scrollUpNoSave(top, bottom, n)
}

// scrollUpNoSave rotates the line slices rather than copying cells, so a
// scroll costs one blanking of each line that enters.
func (s *Screen) scrollUpNoSave(top, bottom, n int) {
	h := bottom - top + 1
	if n <= 0 || h <= 0 {
		return
	}
	if n > h {
		n = h
	}
	if !s.fullWidth() {
		s.scrollRect(top, bottom, n, true)
		return
	}
	if top == 0 && bottom == s.rows-1 {
		b := s.cur
		b.base = (b.base + n) % len(b.lines)
	} else {
		s.rotateRows(top, bottom, n)
	}
	for r := bottom - n + 1; r <= bottom; r++ {
		s.fill(s.line(r), 0, s.cols)
		s.cur.setWrapped(r, false)
	}
}

// scrollRect scrolls the cells between the left and right margins of rows
// top..bottom by n rows (up or down), leaving the columns outside the
// margins alone (DECSLRM). Wide characters straddling a margin are blanked
// first, since their halves would otherwise be separated.
func (s *Screen) scrollRect(top, bottom, n int, up bool) {
	l, r := s.left, s.right+1
	for row := top; row <= bottom; row++ {
		line := s.line(row)
		cutAt(line, l)
		cutAt(line, r)
	}
	if up {
		for row := top; row+n <= bottom; row++ {
			copy(s.line(row)[l:r], s.line(row + n)[l:r])
		}
		for row := bottom - n + 1; row <= bottom; row++ {
			s.blankRange(s.line(row), l, r)
		}
		return
	}
	for row := bottom; row-n >= top; row-- {
		copy(s.line(row)[l:r], s.line(row - n)[l:r])
	}
	for row := top; row < top+n; row++ {
		s.blankRange(s.line(row), l, r)
	}
}

// rotateRows rotates logical rows top..bottom up by k.
func (s *Screen) rotateRows(top, bottom, k int) {
	s.cur.linear()
	rotate(s.cur.lines[top:bottom+1], k)
	rotate(s.cur.wrapped[top:bottom+1], k)
}

func (s *Screen) scrollDown(top, bottom, n int) {
	h := bottom - top + 1
	if n <= 0 || h <= 0 {
		return
	}
	if n > h {
		n = h
	}
	if !s.fullWidth() {
		s.scrollRect(top, bottom, n, false)
		return
	}
	if top == 0 && bottom == s.rows-1 {
		b := s.cur
		b.base = (b.base + len(b.lines) - n) % len(b.lines)
	} else {
		s.rotateRows(top, bottom, h-n)
	}
	for r := top; r < top+n; r++ {
		s.fill(s.line(r), 0, s.cols)
		s.cur.setWrapped(r, false)
	}
}

// rotate moves l[k:] to the front and l[:k] to the back in place.
func rotate[T any](l []T, k int) {
	if k <= 0 || k >= len(l) {
		return
	}
	if k == 1 { // the common single-line scroll
		first := l[0]
		copy(l, l[1:])
		l[len(l)-1] = first
		return
	}
	if k == len(l)-1 {
		last := l[len(l)-1]
		copy(l[1:], l[:len(l)-1])
		l[0] = last
		return
	}
	reverse(l[:k])
	reverse(l[k:])
	reverse(l)
}

func reverse[T any](l []T) {
	for i, j := 0, len(l)-1; i < j; i, j = i+1, j-1 {
		l[i], l[j] = l[j], l[i]
	}
}
