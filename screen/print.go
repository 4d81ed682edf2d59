package screen

import (
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// charset is what a G0-G3 slot designates.
type charset uint8

const (
	charsetASCII   charset = iota
	charsetSpecial         // DEC special graphics: line drawing
)

// decSpecial maps 0x5f..0x7e to the DEC special graphics characters.
var decSpecial = [32]rune{
	' ', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼',
	'⎺', '⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
}

// printASCII writes a run of printable ASCII. It is the hot path: whole
// spans are copied into the line between wraps, with the wide-character
// fix-ups done only at the span's two ends.
func (s *Screen) printASCII(b []byte) {
	if s.charsets[s.gl] != charsetASCII || s.insert {
		for _, c := range b {
			s.printRune(rune(c))
		}
		return
	}
	for len(b) > 0 {
		if s.pendingWrap {
			if !s.autowrap {
				// Without autowrap every further character lands in the
				// last column, and the wrap stays pending.
				line := s.line(s.row)
				c := b[len(b)-1]
				s.overwriteWideAt(line, s.col)
				line[s.col] = cell{r: int32(c), attrs: s.pen}
				s.lastPrinted = int32(c)
				return
			}
			s.wrap()
		}
		line := s.line(s.row)
		limit := s.wrapLimit()
		n := limit - s.col
		if n > len(b) {
			n = len(b)
		}
		s.overwriteWideAt(line, s.col)
		s.overwriteWideAt(line, s.col+n-1)
		dst := line[s.col : s.col+n]
		for i, c := range b[:n] {
			dst[i] = cell{r: int32(c), attrs: s.pen}
		}
		s.lastPrinted = int32(b[n-1])
		s.col += n
		b = b[n:]
		if s.col < limit {
			continue
		}
		// The wrap is pending even with autowrap off, as in alacritty
		// (interminai's xterm mode) and xterm.js: it is taken if ?7h comes
		// back before the next character.
		s.col = limit - 1
		s.pendingWrap = true
	}
}

// printRune writes one character of any width at the cursor.
func (s *Screen) printRune(r rune) {
	if r >= 0x5f && r <= 0x7e && s.charsets[s.gl] == charsetSpecial {
		r = decSpecial[r-0x5f]
	}
	w := runeWidth(r)
	if r >= 0x300 && s.extendCluster(r, w) {
		return
	}
	if w == 0 {
		return // a zero-width character with nothing to attach to
	}
	if s.pendingWrap && s.autowrap {
		s.wrap()
	}
	limit := s.wrapLimit()
	if w == 2 && s.col == limit-1 {
		// A wide character never straddles the margin: it wraps whole, or
		// is dropped when it cannot be shown at all.
		if !s.autowrap || limit-s.left < 2 {
			return
		}
		// The cell left blank is written with the whole pen, as a space
		// would be (alacritty writes its spacer with the pen, xterm.js
		// erases with the pen's attributes): an inverse or underlined
		// run that wraps shows no gap at the margin.
		s.overwriteWideAt(s.line(s.row), s.col)
		s.line(s.row)[s.col] = cell{attrs: s.pen}
		s.line(s.row)[s.col].flags |= flagWrapPad
		s.wrap()
		limit = s.wrapLimit()
	}
	if s.insert {
		s.insertBlanks(w)
	}
	line := s.line(s.row)
	s.overwriteWideAt(line, s.col)
	line[s.col] = cell{r: r, attrs: s.pen}
	if w == 2 {
		s.overwriteWideAt(line, s.col+1)
		line[s.col].flags |= flagWideLead
		line[s.col+1] = cell{attrs: s.pen}
		line[s.col+1].flags |= flagWideTrail
	}
	s.lastPrinted = r
	s.col += w
	if s.col >= limit {
		s.col = limit - 1
		s.pendingWrap = true // with autowrap off too: see printASCII
	}
}

// wrapLimit is one past the column where printing wraps: the right
// margin when the cursor is inside it, the screen edge otherwise.
func (s *Screen) wrapLimit() int {
	if s.col <= s.right {
		return s.right + 1
	}
	return s.cols
}

// wrap moves to the start of the next line, scrolling if needed: the left
// margin when the line wrapped at the right one.
func (s *Screen) wrap() {
	s.pendingWrap = false
	// Only a wrap at the screen edge makes one logical line of two rows;
	// text wrapped between DECSLRM margins shares its rows with other text.
	if s.col > s.right || s.fullWidth() {
		s.cur.setWrapped(s.row, true)
	}
	if s.col <= s.right {
		s.col = s.left
	} else {
		s.col = 0
	}
	s.index()
}

// overwriteWideAt is clearWideAt for a character about to be written to
// column c: the other half of a wide character there becomes a blank
// that keeps the character's colours and style, as alacritty leaves it
// (its spacer was written with the character's pen), where an erase keeps
// only the background.
func (s *Screen) overwriteWideAt(line []cell, c int) {
	if c < 0 || c >= len(line) {
		return
	}
	f := line[c].flags
	if f&flagWideTrail != 0 && c > 0 && line[c-1].flags&flagWideLead != 0 {
		line[c-1] = cell{attrs: line[c-1].attrs}
		line[c-1].flags &^= flagWideLead
	}
	if f&flagWideLead != 0 && c+1 < len(line) && line[c+1].flags&flagWideTrail != 0 {
		line[c+1] = cell{attrs: line[c+1].attrs}
		line[c+1].flags &^= flagWideTrail
	}
	line[c].flags &^= flagWideLead | flagWideTrail
}

// clearWideAt makes sure writing to column c does not leave half of a
// wide character behind: the other half becomes a blank.
func (s *Screen) clearWideAt(line []cell, c int) {
	if c < 0 || c >= len(line) {
		return
	}
	f := line[c].flags
	if f&flagWideTrail != 0 && c > 0 && line[c-1].flags&flagWideLead != 0 {
		line[c-1] = blankCell(line[c-1].bg)
	}
	if f&flagWideLead != 0 && c+1 < len(line) && line[c+1].flags&flagWideTrail != 0 {
		line[c+1] = blankCell(line[c+1].bg)
	}
	line[c].flags &^= flagWideLead | flagWideTrail
}

// extendCluster tries to add r to the grapheme cluster in the cell before
// the cursor (UAX #29, segmented by uniseg) and reports whether it did.
// The cluster's width is the sum of its code points' widths as glibc's
// wcwidth gives them: programs position the cursor by wcwidth (readline
// redraws a command line by it), so the screen must agree with it.
// alacritty (interminai's xterm mode) and xterm.js do the same. A cluster
// wider than two cells is not built; the code point that would widen it
// starts a new cell: an emoji modifier after an emoji takes 2+2 cells, a
// ZWJ family of three 2+2+2, the joiner staying with the emoji before it.
func (s *Screen) extendCluster(r rune, w int) bool {
	c := s.col - 1
	if s.pendingWrap {
		c = s.col
	}
	if c < 0 {
		return false
	}
	line := s.line(s.row)
	if line[c].flags&flagWideTrail != 0 && c > 0 && line[c-1].flags&flagWideLead != 0 {
		c--
	}
	base := line[c].r
	if base == 0 || (base > 0 && plainStarter(base) && plainStarter(r)) {
		return false
	}
	buf := s.clusterBuf[:0]
	if base < 0 {
		buf = append(buf, s.clusters[-base-1]...)
	} else {
		buf = utf8.AppendRune(buf, base)
	}
	n := len(buf)
	buf = utf8.AppendRune(buf, r)
	s.clusterBuf = buf
	if _, rest, _, _ := uniseg.FirstGraphemeCluster(buf, -1); len(rest) != 0 {
		return false // r starts a new cluster
	}
	wide := line[c].flags&flagWideLead != 0
	cur := 1
	if wide {
		cur = 2
	}
	if cur+w > 2 {
		return false
	}
	if len(buf) > maxClusterBytes {
		return w == 0 // endless combining marks (Zalgo text) would grow without bound: drop them
	}
	if w > 0 {
		// The cluster grows from one cell to two: only when it sits right
		// before the cursor and the next cell is inside the margin.
		if s.pendingWrap || c+1 != s.col || s.col >= s.wrapLimit() {
			return false
		}
	}
	idx, ok := s.internCluster(buf)
	if !ok {
		buf = buf[:n]
		return w == 0 // out of cluster slots: keep the base as it was
	}
	line[c].r = -idx - 1
	if w > 0 {
		if s.insert {
			s.insertBlanks(1) // the cluster's new cell pushes the rest right
		}
		s.overwriteWideAt(line, c+1)
		line[c].flags |= flagWideLead
		line[c+1] = cell{attrs: line[c].attrs}
		line[c+1].flags = line[c].flags&styleMask | flagWideTrail
		s.col++
		if limit := s.wrapLimit(); s.col >= limit {
			s.col = limit - 1
			s.pendingWrap = true
		}
	}
	return true
}

// plainStarter reports code points that are neither continuations of a
// cluster (Extend, SpacingMark, ZWJ, regional indicators, Hangul jamo)
// nor Prepend: between two of them UAX #29 always breaks, so the common
// runs (CJK text, box drawing after ASCII) skip the segmenter. Extended
// pictographs among them only join after a ZWJ, which is never a lone
// cell's content.
func plainStarter(r rune) bool {
	switch {
	case r < 0x300:
		return true
	case r >= 0x2500 && r <= 0x2bff: // box drawing, blocks, shapes, arrows
		return true
	case r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff: // CJK ideographs
		return true
	case r >= 0xac00 && r <= 0xd7a3: // Hangul syllables (joined only after jamo)
		return true
	case r >= 0xff01 && r <= 0xff60: // fullwidth forms
		return true
	}
	return false
}

// internCluster returns the index of cluster text b in s.clusters, adding
// it if new; false when the table is full.
func (s *Screen) internCluster(b []byte) (int32, bool) {
	if idx, ok := s.clusterIndex[string(b)]; ok {
		return idx, true
	}
	if len(s.clusters) >= maxClusters {
		return 0, false
	}
	if s.clusterIndex == nil {
		s.clusterIndex = make(map[string]int32)
	}
	idx := int32(len(s.clusters))
	s.clusters = append(s.clusters, string(b))
	s.clusterIndex[string(b)] = idx
	return idx, true
}
