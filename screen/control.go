package screen

// execute performs a C0 control character.
func (s *Screen) execute(b byte) {
	switch b {
	case 0x08: // BS
		s.pendingWrap = false
		if s.col > 0 {
			s.col--
		}
	case 0x09: // HT
		s.tab()
	case 0x0a, 0x0b, 0x0c: // LF, VT, FF
		s.cur.setWrapped(s.row, false) // an explicit newline ends the logical line, as in tmux
		s.index()
		if s.newline {
			s.carriageReturn()
		}
		s.pendingWrap = false
	case 0x0d: // CR
		s.carriageReturn()
	case 0x0e: // SO: invoke G1
		s.gl = 1
	case 0x0f: // SI: invoke G0
		s.gl = 0
	}
	// BEL and the rest have no effect on the screen.
}

// escDispatch handles ESC sequences other than CSI and strings.
func (s *Screen) escDispatch(final byte) {
	p := s.seq
	if len(p.Inter) == 0 {
		switch final {
		case '7':
			s.saveCursor()
		case '8':
			s.restoreCursor()
		case 'D':
			s.cur.setWrapped(s.row, false)
			s.index()
			s.pendingWrap = false
		case 'E':
			s.cur.setWrapped(s.row, false)
			s.index()
			s.carriageReturn()
		case 'H':
			s.tabs[s.col] = true
		case 'M':
			s.reverseIndex()
		case 'c':
			s.hardReset()
		case '=':
			s.appKeypad = true
		case '>':
			s.appKeypad = false
		case '\\': // ST after a string we already closed
		case 'Z': // DECID: the old form of DA1
			s.replies = append(s.replies, replyDA1...)
		case 'n': // LS2: invoke G2
			s.gl = 2
		case 'o': // LS3: invoke G3
			s.gl = 3
		default:
			s.recordUnhandled()
		}
		return
	}
	if len(p.Inter) > 1 || p.Malformed {
		s.recordUnhandled()
		return
	}
	switch p.Inter[0] {
	case '(', ')', '*', '+':
		slot := int(p.Inter[0] - '(') // '(' ')' '*' '+' are consecutive
		switch final {
		case '0':
			s.charsets[slot] = charsetSpecial
		case 'B', 'A', 'U':
			s.charsets[slot] = charsetASCII
		default:
			s.recordUnhandled()
		}
	case '%': // select UTF-8 / default: we are always UTF-8
	case ' ': // S7C1T / S8C1T: replies are always 7-bit
	case '#':
		if final == '8' {
			s.alignmentTest()
		} else {
			s.recordUnhandled()
		}
	default:
		s.recordUnhandled()
	}
}

// alignmentTest is DECALN: fill the screen with E and home the cursor.
func (s *Screen) alignmentTest() {
	for _, l := range s.cur.lines {
		for i := range l {
			l[i] = cell{r: 'E'}
		}
	}
	clear(s.cur.wrapped)
	s.top, s.bottom = 0, s.rows-1
	s.left, s.right = 0, s.cols-1
	s.row, s.col, s.pendingWrap = 0, 0, false
}

// oscDispatch acts on an operating system command: only titles matter.
func (s *Screen) oscDispatch() {
	data := s.seq.Data
	n, i := 0, 0
	for i < len(data) && data[i] >= '0' && data[i] <= '9' && i < 6 {
		n = n*10 + int(data[i]-'0')
		i++
	}
	if i == 0 || (i < len(data) && data[i] != ';') {
		if i > 0 && i == len(data) && (n == 104 || (n >= 110 && n <= 112)) {
			s.oscColorReset(n, "")
			return
		}
		s.recordUnhandled()
		return
	}
	if i < len(data) {
		i++
	}
	switch n {
	case 0, 2:
		s.title = string(data[i:])
	case 1: // icon name: nothing shows it
	case 4, 10, 11, 12:
		s.oscColor(n, string(data[i:]))
	case 104, 110, 111, 112:
		s.oscColorReset(n, string(data[i:]))
	case 133:
		s.addMark(data[i:])
	default:
		s.recordUnhandled()
	}
}
