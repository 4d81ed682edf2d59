package screen

// What a repaint of both screens needs (sidecar/persist's SNAPSHOT): the
// lines of the screen not shown, each screen's saved cursor, and the tab
// stops.

// AppendScreenLine appends line n (1..rows) of the main screen (alt
// false) or of the alternate one, whether it is shown or not, as
// AppendLine renders a line.
func (s *Screen) AppendScreenLine(dst []byte, alt bool, n int, ansi bool) []byte {
	if n < 1 || n > s.rows {
		return dst
	}
	b := s.main
	if alt {
		b = s.alt
	}
	if ansi {
		return s.appendANSI(dst, b.row(n-1))
	}
	return s.appendPlain(dst, b.row(n-1))
}

// SavedCursor returns the position DECSC (or ?1048, ?1049) saved on the
// main screen (alt false) or the alternate one, 0-based; ok is false
// when nothing was saved there.
func (s *Screen) SavedCursor(alt bool) (row, col int, ok bool) {
	c := s.main.saved
	if alt {
		c = s.alt.saved
	}
	return c.row, min(c.col, s.cols-1), c.valid
}

// TabStops returns the columns (0-based) that have a tab stop.
func (s *Screen) TabStops() []int {
	var stops []int
	for i, on := range s.tabs {
		if on {
			stops = append(stops, i)
		}
	}
	return stops
}
