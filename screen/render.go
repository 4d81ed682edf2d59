package screen

import (
	"strconv"
	"unicode/utf8"
)

// Line renders one line in the session protocol's numbering: 1..rows are
// screen lines, -1..-ScrollbackLen() scrollback lines (-1 is the newest).
// Anything else yields "". Plain text has trailing blanks trimmed. ANSI
// text uses SGR only where attributes change, ESC[0m where they return
// to default, and ends with ESC[0m if the line ends styled.
func (s *Screen) Line(n int, ansi bool) string { return string(s.AppendLine(nil, n, ansi)) }

// AppendLine appends what Line(n, ansi) returns to dst, for a caller that
// renders many lines into a buffer of its own.
func (s *Screen) AppendLine(dst []byte, n int, ansi bool) []byte {
	var l []cell
	switch {
	case n >= 1 && n <= s.rows:
		l = s.line(n - 1)
	case n <= -1 && -n <= s.scroll.len():
		l = s.scroll.at(-n)
	default:
		return dst
	}
	if ansi {
		return s.appendANSI(dst, l)
	}
	return s.appendPlain(dst, l)
}

// Text renders lines 1..rows as plain text joined by newlines.
func (s *Screen) Text() string {
	var b []byte
	for r := 0; r < s.rows; r++ {
		if r > 0 {
			b = append(b, '\n')
		}
		b = s.appendPlain(b, s.line(r))
	}
	return string(b)
}

// AppendPen appends the SGR that sets the pen (what new text is written
// with) from any other: a reset, then what the pen has.
func (s *Screen) AppendPen(b []byte) []byte {
	if s.pen == (attrs{}) {
		return append(b, "\x1b[0m"...)
	}
	b = append(b, "\x1b[0;"...)
	sgr := appendSGR(nil, attrs{}, s.pen)
	return append(b, sgr[2:]...)
}

// AppendCharsets appends what designates G0 and G1 as the screen has them
// (DEC special graphics or ASCII), G2 and G3 too where one is not ASCII
// or is in use, and invokes the one in use (SI, SO, LS2 or LS3); nothing
// when they are the defaults, ASCII in all and G0 in use.
func (s *Screen) AppendCharsets(b []byte) []byte {
	if s.charsets == [4]charset{} && s.gl == 0 {
		return b
	}
	for slot, intro := range []byte{'(', ')', '*', '+'} {
		if slot >= 2 && s.charsets[2] == charsetASCII && s.charsets[3] == charsetASCII && s.gl < 2 {
			break
		}
		final := byte('B')
		if s.charsets[slot] == charsetSpecial {
			final = '0'
		}
		b = append(b, 0x1b, intro, final)
	}
	switch s.gl {
	case 1:
		return append(b, 0x0e) // SO
	case 2:
		return append(b, 0x1b, 'n') // LS2
	case 3:
		return append(b, 0x1b, 'o') // LS3
	}
	return append(b, 0x0f) // SI
}

// AppendCursorCell appends the cell under the cursor as ANSI, the SGR
// it was written with (from the default pen) and its character, and
// returns the column where it starts: the cursor's, or the one before for
// the right half of a wide character. Written at that column, with the
// pen reset after it, it leaves a terminal whose autowrap is on in the
// pending-wrap state, if the cursor is in the last column: what a repaint
// does for a screen whose PendingWrap is set (a CUP alone would clear it).
func (s *Screen) AppendCursorCell(b []byte) ([]byte, int) {
	row, col := s.Cursor()
	l := s.line(row)
	if col >= len(l) {
		return append(b, "\x1b[0m "...), col
	}
	if col > 0 && l[col].flags&flagWideTrail != 0 && l[col-1].flags&flagWideLead != 0 {
		col--
	}
	a := l[col].attrs
	a.flags &= styleMask
	b = appendSGR(b, attrs{}, a)
	return s.appendCell(b, l, col), col
}

// appendCell appends the text of cell i of l: a wide character once (its
// trailing half adds nothing), and a space for a blank or a broken half.
func (s *Screen) appendCell(b []byte, l []cell, i int) []byte {
	c := l[i]
	switch {
	case c.flags&flagWideTrail != 0:
		if i > 0 && l[i-1].flags&flagWideLead != 0 {
			return b
		}
		return append(b, ' ')
	case c.flags&flagWideLead != 0 && (i+1 >= len(l) || l[i+1].flags&flagWideTrail == 0):
		return append(b, ' ')
	case c.r == 0:
		return append(b, ' ')
	case c.r < 0:
		if idx := int(-c.r - 1); idx < len(s.clusters) {
			return append(b, s.clusters[idx]...)
		}
		return append(b, ' ')
	case c.r < utf8.RuneSelf:
		return append(b, byte(c.r))
	default:
		return utf8.AppendRune(b, c.r)
	}
}

func (s *Screen) appendPlain(b []byte, l []cell) []byte {
	start := len(b)
	for i := range l {
		b = s.appendCell(b, l, i)
	}
	end := len(b)
	for end > start && b[end-1] == ' ' {
		end--
	}
	return b[:end]
}

func (s *Screen) appendANSI(b []byte, l []cell) []byte {
	end := len(l)
	for end > 0 && l[end-1].isDefaultBlank() {
		end--
	}
	var cur attrs
	for i := 0; i < end; i++ {
		a := l[i].attrs
		a.flags &= styleMask
		if a != cur {
			b = appendSGR(b, cur, a)
			cur = a
		}
		b = s.appendCell(b, l, i)
	}
	if cur != (attrs{}) {
		b = append(b, "\x1b[0m"...)
	}
	return b
}

var flagCodes = [...]struct {
	flag uint16
	code byte
}{
	{flagBold, '1'}, {flagDim, '2'}, {flagItalic, '3'}, {flagUnderline, '4'},
	{flagBlink, '5'}, {flagInverse, '7'}, {flagHidden, '8'}, {flagStrike, '9'},
}

// appendSGR appends the shortest simple SGR taking the pen from prev to
// next: a plain reset when next is the default, a reset plus the full
// set when an attribute must be switched off, otherwise only what changed.
func appendSGR(b []byte, prev, next attrs) []byte {
	if next == (attrs{}) {
		return append(b, "\x1b[0m"...)
	}
	b = append(b, 0x1b, '[')
	first := true
	sep := func() {
		if !first {
			b = append(b, ';')
		}
		first = false
	}
	if prev.flags&^next.flags != 0 {
		b = append(b, '0')
		first = false
		prev = attrs{}
	}
	for _, fc := range flagCodes {
		if next.flags&fc.flag != 0 && prev.flags&fc.flag == 0 {
			sep()
			b = append(b, fc.code)
		}
	}
	if next.fg != prev.fg {
		sep()
		b = appendColor(b, next.fg, false)
	}
	if next.bg != prev.bg {
		sep()
		b = appendColor(b, next.bg, true)
	}
	return append(b, 'm')
}

func appendColor(b []byte, c color, bg bool) []byte {
	v := int(c &^ colorKindMsk)
	switch c & colorKindMsk {
	case colorKind16:
		base := 30
		if v >= 8 {
			base, v = 90, v-8
		}
		if bg {
			base += 10
		}
		return strconv.AppendInt(b, int64(base+v), 10)
	case colorKind256:
		if bg {
			b = append(b, "48;5;"...)
		} else {
			b = append(b, "38;5;"...)
		}
		return strconv.AppendInt(b, int64(v), 10)
	case colorKindRGB:
		if bg {
			b = append(b, "48;2;"...)
		} else {
			b = append(b, "38;2;"...)
		}
		b = strconv.AppendInt(b, int64(v>>16), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(v>>8&0xff), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(v&0xff), 10)
	}
	if bg {
		return append(b, "49"...)
	}
	return append(b, "39"...)
}
