package screen

import "strconv"

// setANSIModes handles SM/RM (CSI h / CSI l) without the ? prefix.
func (s *Screen) setANSIModes(on bool) {
	p := &s.parser
	unknown := false
	for i := 0; i < max(p.nparams, 1); i++ {
		switch p.param(i, 0) {
		case 4:
			s.insert = on
		case 20:
			s.newline = on
		default:
			unknown = true
		}
	}
	if unknown {
		s.recordUnhandled()
	}
}

// inertModes are DEC private modes that a headless screen remembers (so
// PrivateMode can answer) but that change nothing it renders: mouse
// reporting, focus events, cursor blink, synchronized output and the like.
var inertModes = map[int]bool{
	3: true, 4: true, 5: true, 8: true, 9: true, 12: true, 40: true, 45: true,
	66: true, 67: true, 69: true, 1000: true, 1001: true, 1002: true, 1003: true,
	1004: true, 1005: true, 1006: true, 1007: true, 1015: true, 1016: true,
	1034: true, 1036: true, 1039: true, 1042: true, 1048: true, 2026: true, 2027: true,
}

// setPrivateModes handles DECSET/DECRST (CSI ? h / CSI ? l).
func (s *Screen) setPrivateModes(on bool) {
	p := &s.parser
	unknown := false
	for i := 0; i < p.nparams; i++ {
		switch m := p.params[i]; m {
		case 1:
			s.appCursor = on
		case 6:
			s.origin = on
			s.moveTo(0, 0)
		case 7:
			s.autowrap = on
			if !on {
				s.pendingWrap = false
			}
		case 25:
			s.cursorVisible = on
		case 47, 1047:
			s.switchScreen(on, m == 1047, false)
		case 1049:
			s.switchScreen(on, true, true)
		case 2004:
			s.bracketed = on
		case 1048:
			if on {
				s.saveCursor()
			} else {
				s.restoreCursor()
			}
		default:
			if !inertModes[m] {
				unknown = true
				continue
			}
			if s.inert == nil {
				s.inert = make(map[int]bool)
			}
			s.inert[m] = on
		}
	}
	if unknown || p.nparams == 0 {
		s.recordUnhandled()
	}
}

// switchScreen enters or leaves the alternate screen. clear wipes the
// alternate screen (on entry for 1049, on exit for 1047); withCursor saves
// the cursor on entry and restores it on exit (1049).
func (s *Screen) switchScreen(on, clear, withCursor bool) {
	if on == s.altActive {
		return
	}
	if on {
		if withCursor {
			s.saveCursor()
		}
		s.cur = s.alt
		s.altActive = true
		if clear && withCursor {
			s.clearBuffer(s.alt)
		}
		return
	}
	if clear && !withCursor {
		s.clearBuffer(s.alt)
	}
	s.cur = s.main
	s.altActive = false
	if withCursor {
		s.restoreCursor()
	}
}

func (s *Screen) clearBuffer(b *buffer) {
	for _, l := range b.lines {
		for i := range l {
			l[i] = cell{}
		}
	}
}

// reportMode answers DECRQM: CSI [?] Ps ; Pm $ y with Pm 1 set, 2 reset,
// 0 not recognised.
func (s *Screen) reportMode(private bool) {
	m := s.parser.param(0, 0)
	state := 0
	if private {
		switch {
		case m == 1 || m == 6 || m == 7 || m == 25 || m == 47 || m == 1047 || m == 1049 || m == 2004 || inertModes[m]:
			state = 2
			if s.PrivateMode(m) {
				state = 1
			}
		}
	} else {
		switch m {
		case 4:
			state = boolState(s.insert)
		case 20:
			state = boolState(s.newline)
		}
	}
	s.replies = append(s.replies, 0x1b, '[')
	if private {
		s.replies = append(s.replies, '?')
	}
	s.replies = strconv.AppendInt(s.replies, int64(m), 10)
	s.replies = append(s.replies, ';')
	s.replies = strconv.AppendInt(s.replies, int64(state), 10)
	s.replies = append(s.replies, '$', 'y')
}

func boolState(on bool) int {
	if on {
		return 1
	}
	return 2
}
