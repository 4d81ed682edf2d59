package screen

// scrollback is a ring of lines that scrolled off the top of the main
// screen. Lines are stored trimmed of trailing default blanks. Line storage
// is never given back: the evicted line's cells are reused when the ring is
// full, and after a clear (ED 3, which `clear` sends) the old lines are
// refilled before anything is allocated, so neither a steady flood nor a
// program that clears and redraws allocates once the ring has grown.
type scrollback struct {
	capacity int
	lines    [][]cell // ring storage; lines[count:] are spare buffers
	wrapped  []bool   // wrapped[i]: lines[i] continues on the next line (soft wrap)
	count    int      // lines in use
	head     int      // index of the oldest line when full
	full     func()   // called before a push drops the oldest line (OnScrollbackFull)
}

func (b *scrollback) len() int { return b.count }

// push appends a copy of l. A soft-wrapped line keeps its trailing
// blanks: they are part of the logical line that reflow re-joins.
func (b *scrollback) push(l []cell, wrapped bool) {
	if b.capacity == 0 {
		return
	}
	if b.count == b.capacity && b.full != nil {
		b.full() // may empty the ring
	}
	n := len(l)
	for !wrapped && n > 0 && l[n-1].isDefaultBlank() {
		n--
	}
	if b.count < b.capacity {
		if b.count < len(b.lines) {
			b.lines[b.count] = append(b.lines[b.count][:0], l[:n]...)
			b.wrapped[b.count] = wrapped
		} else {
			b.lines = append(b.lines, append([]cell(nil), l[:n]...))
			b.wrapped = append(b.wrapped, wrapped)
		}
		b.count++
		return
	}
	b.lines[b.head] = append(b.lines[b.head][:0], l[:n]...)
	b.wrapped[b.head] = wrapped
	b.head++
	if b.head == b.count {
		b.head = 0
	}
}

// at returns the i-th line counting back from the screen: 1 is the most
// recent.
func (b *scrollback) at(i int) []cell {
	return b.lines[b.index(i)]
}

func (b *scrollback) index(i int) int { return (b.head + b.count - i) % b.count }

// wrappedAt reports whether line i (as for at) was soft-wrapped.
func (b *scrollback) wrappedAt(i int) bool { return b.wrapped[b.index(i)] }

// takeNewest removes the n most recent lines (n <= len()) and returns
// copies of them, oldest first, each padded or cut to cols cells, with
// their soft-wrap flags: for a screen that grows taller and takes them
// back.
func (b *scrollback) takeNewest(n, cols int) ([][]cell, []bool) {
	lines, wrapped := make([][]cell, n), make([]bool, n)
	for i := range n {
		// A copy: the ring reuses its buffers.
		lines[i], wrapped[i] = append([]cell(nil), b.at(n-i)...), b.wrappedAt(n-i)
	}
	lines = resizeLines(lines, cols, n)
	if b.head != 0 {
		// Full: lay the ring out oldest first (as GrowScrollback) so
		// that dropping the newest is shortening it.
		b.lines = append(b.lines[b.head:b.count:b.count], b.lines[:b.head]...)
		b.wrapped = append(b.wrapped[b.head:b.count:b.count], b.wrapped[:b.head]...)
		b.head = 0
	}
	b.count -= n
	return lines, wrapped
}

// clear empties the ring but keeps the line buffers for reuse. The ring
// only wraps (head != 0) once full, so the first count lines are the used
// ones whatever head is.
func (b *scrollback) clear() {
	b.count = 0
	b.head = 0
}

// DropScrollback forgets every line the scrollback holds, as ED 3 (CSI 3
// J) does, without a byte written to the screen: for a caller that has
// taken the lines (Line) and keeps them in a cheaper form than cells.
func (s *Screen) DropScrollback() { s.scroll.clear() }

// OnScrollbackFull has f called whenever the scrollback is full and a line
// is about to push its oldest out, before it does; f may take the lines
// (AppendLine) and empty the ring (DropScrollback). It is for a caller
// that streams the scrollback out through a small ring, as a repaint of
// a long stream does, and so loses no line whatever scrolls at once.
func (s *Screen) OnScrollbackFull(f func()) { s.scroll.full = f }

// ScrollbackLen returns how many lines the scrollback holds.
func (s *Screen) ScrollbackLen() int { return s.scroll.len() }

// ScrollbackCap returns the scrollback capacity in lines.
func (s *Screen) ScrollbackCap() int { return s.scroll.capacity }

// GrowScrollback raises the scrollback capacity to n lines, keeping every
// line it holds; a smaller n changes nothing (lines are never dropped here,
// so the line numbers clients hold stay valid). A full ring is laid out
// oldest first, as a ring that never wrapped is.
func (s *Screen) GrowScrollback(n int) {
	b := &s.scroll
	if n <= b.capacity {
		return
	}
	if b.head != 0 {
		// Full (head only moves then): len(lines) == count == capacity.
		b.lines = append(b.lines[b.head:b.count:b.count], b.lines[:b.head]...)
		b.wrapped = append(b.wrapped[b.head:b.count:b.count], b.wrapped[:b.head]...)
		b.head = 0
	}
	b.capacity = n
}
