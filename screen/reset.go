package screen

// hardReset is RIS (ESC c): everything back to power-on state except the
// scrollback and the unhandled ring, which are the caller's history, and
// the title.
func (s *Screen) hardReset() {
	if s.altActive {
		s.cur = s.main
		s.altActive = false
	}
	s.pen = attrs{}
	s.clearBuffer(s.main)
	s.clearBuffer(s.alt)
	s.main.saved = cursorState{}
	s.alt.saved = cursorState{}
	s.row, s.col, s.pendingWrap = 0, 0, false
	s.pen = attrs{}
	s.lastPrinted = 0
	s.marks = s.marks[:0]
	s.top, s.bottom = 0, s.rows-1
	s.left, s.right, s.lrmm = 0, s.cols-1, false
	s.colors = colorTable{}
	s.tabs = resetTabs(s.tabs, s.cols)
	s.autowrap = true
	s.origin = false
	s.insert = false
	s.newline = false
	s.cursorVisible = true
	s.appCursor = false
	s.appKeypad = false
	s.bracketed = false
	s.cursorStyle = 0
	blink := s.inert[12] // an option in xterm.js, which RIS leaves
	clear(s.inert)
	if blink {
		s.inert[12] = true
	}
	s.charsets = [4]charset{}
	s.gl = 0
	// The title stays, as in xterm (and in a host, whose window keeps
	// its title); its stack goes.
	s.titles = s.titles[:0]
}

// softReset is DECSTR (CSI ! p): modes and pen reset, screen content and
// cursor position kept. The modes are those xterm.js resets, the hosts'
// emulator (bracketed paste, focus events and the cursor's shape too,
// which xterm keeps; ?12's blinking is an option there, which stays).
func (s *Screen) softReset() {
	s.bracketed = false
	for _, n := range []int{45, 1004, 2026} {
		delete(s.inert, n)
	}
	s.cursorStyle = 0
	s.cursorVisible = true
	s.insert = false
	s.origin = false
	s.autowrap = true
	s.appCursor = false
	s.appKeypad = false
	s.top, s.bottom = 0, s.rows-1
	s.left, s.right = 0, s.cols-1
	s.charsets = [4]charset{}
	s.gl = 0
	s.pen = attrs{}
	s.pendingWrap = false
	s.cur.saved = cursorState{}
}
