package screen

// scrollback is a ring of lines that scrolled off the top of the main
// screen. Lines are stored trimmed of trailing default blanks, and the
// evicted line's storage is reused, so a steady flood allocates nothing.
type scrollback struct {
	capacity int
	lines    [][]cell // ring storage, len <= capacity
	head     int      // index of the oldest line when full
}

func (b *scrollback) len() int { return len(b.lines) }

// push appends a copy of l.
func (b *scrollback) push(l []cell) {
	if b.capacity == 0 {
		return
	}
	n := len(l)
	for n > 0 && l[n-1].isDefaultBlank() {
		n--
	}
	if len(b.lines) < b.capacity {
		b.lines = append(b.lines, append([]cell(nil), l[:n]...))
		return
	}
	slot := b.lines[b.head][:0]
	b.lines[b.head] = append(slot, l[:n]...)
	b.head++
	if b.head == len(b.lines) {
		b.head = 0
	}
}

// at returns the i-th line counting back from the screen: 1 is the most
// recent.
func (b *scrollback) at(i int) []cell {
	n := len(b.lines)
	idx := (b.head + n - i) % n
	return b.lines[idx]
}

func (b *scrollback) clear() {
	b.lines = nil
	b.head = 0
}

// ScrollbackLen returns how many lines the scrollback holds.
func (s *Screen) ScrollbackLen() int { return s.scroll.len() }

// ScrollbackCap returns the scrollback capacity in lines.
func (s *Screen) ScrollbackCap() int { return s.scroll.capacity }
