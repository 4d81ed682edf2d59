package screen

import "strconv"

// setANSIModes handles SM/RM (CSI h / CSI l) without the ? prefix.
func (s *Screen) setANSIModes(on bool) {
	p := s.seq
	unknown := false
	for i := 0; i < max(len(p.Params), 1); i++ {
		switch p.Param(i, 0) {
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
	67: true, 1000: true, 1001: true, 1002: true, 1003: true,
	1004: true, 1005: true, 1006: true, 1007: true, 1015: true, 1016: true,
	1034: true, 1036: true, 1039: true, 1042: true, 1048: true, 2026: true, 2027: true,
}

// mouseTracking are the mouse reporting protocols, of which one is on.
var mouseTracking = map[int]bool{9: true, 1000: true, 1002: true, 1003: true}

// trackedModes are the DEC private modes the screen acts on (and so
// reports through DECRQM besides the inert ones).
var trackedModes = map[int]bool{1: true, 6: true, 7: true, 25: true, 47: true, 66: true, 69: true, 1047: true, 1049: true, 2004: true}

// setPrivateModes handles DECSET/DECRST (CSI ? h / CSI ? l).
func (s *Screen) setPrivateModes(on bool) {
	p := s.seq
	unknown := false
	for i := 0; i < len(p.Params); i++ {
		switch m := p.Params[i]; m {
		case 1:
			s.appCursor = on
		case 66:
			// DECNKM: the keypad mode DECKPAM and DECKPNM set, as
			// xterm keeps it (one flag, so DECRQM ?66 after ESC =
			// says set); the mode tracker does the same.
			s.appKeypad = on
		case 3:
			// DECCOLM. There is no 132-column mode, but alacritty
			// (interminai's xterm mode) runs its other effects, set or
			// reset: the scroll region (here the left and right margins
			// too) goes, the screen is cleared (not into the scrollback)
			// and the cursor goes home. tset and tput init send ?3l.
			// xterm.js ignores it unless told to resize.
			s.top, s.bottom = 0, s.rows-1
			s.left, s.right = 0, s.cols-1
			s.clearBuffer(s.cur)
			s.moveTo(0, 0)
			if s.inert == nil {
				s.inert = make(map[int]bool)
			}
			s.inert[m] = on // DECRQM reports it as before
		case 6:
			s.origin = on
			s.moveTo(0, 0)
		case 7:
			// A wrap pending stays pending either way (alacritty's
			// LINE_WRAP leaves input_needs_wrap alone): once wrapping is
			// on again, the next character starts the next line.
			s.autowrap = on
		case 25:
			s.cursorVisible = on
		case 47:
			s.useAltScreen(on)
		case 1047:
			if !on && s.altActive {
				s.clearBuffer(s.alt)
			}
			s.useAltScreen(on)
		case 1049:
			// xterm: save the cursor (in the slot of the buffer shown now),
			// switch and clear; on reset switch back and restore from the
			// main screen's slot, even when the main screen was already shown.
			// Already on the alternate screen, the cursor is saved (in the
			// alternate slot) but nothing is cleared, as in xterm.js and tmux.
			if on {
				s.saveCursor()
				if !s.altActive {
					s.useAltScreen(true)
					s.clearBuffer(s.alt)
				}
			} else {
				s.useAltScreen(false)
				s.restoreCursor()
			}
		case 69:
			s.lrmm = on
			if !on {
				s.left, s.right = 0, s.cols-1
			}
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
			if mouseTracking[m] {
				// One protocol at a time, as in xterm and
				// xterm.js: setting one replaces the other, and
				// resetting any turns reporting off.
				for n := range mouseTracking {
					delete(s.inert, n)
				}
			}
			s.inert[m] = on
		}
	}
	if unknown || len(p.Params) == 0 {
		s.recordUnhandled()
	}
}

// useAltScreen shows the alternate screen or the main one. Neither
// direction clears or moves the cursor: ?1047 and ?1049 add that around it.
func (s *Screen) useAltScreen(on bool) {
	if on == s.altActive {
		return
	}
	if on {
		s.cur = s.alt
	} else {
		s.cur = s.main
	}
	s.altActive = on
}

// clearBuffer erases every cell of b with the current background, as
// xterm's ClearScreen does.
func (s *Screen) clearBuffer(b *buffer) {
	for _, l := range b.lines {
		if s.pen.bg == colorDefault {
			clear(l) // the zero cell is the default blank: a memclr
			continue
		}
		for i := range l {
			l[i] = blankCell(s.pen.bg)
		}
	}
	clear(b.wrapped)
}

// reportMode answers DECRQM: CSI [?] Ps ; Pm $ y with Pm 1 set, 2 reset,
// 0 not recognised.
func (s *Screen) reportMode(private bool) {
	m := s.seq.Param(0, 0)
	state := 0
	if private {
		switch {
		case trackedModes[m] || inertModes[m]:
			state = boolState(s.PrivateMode(m))
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
