package vtstate

import "strconv"

// The Append methods write the sequences that bring an emulator, in
// whatever state it was, to a part of State. They are the restoring half
// of a SNAPSHOT (sidecar/persist/snapshot.go says in what order).

func appendCSI(b []byte, private bool, n int, final byte) []byte {
	b = append(b, 0x1b, '[')
	if private {
		b = append(b, '?')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, final)
}

func appendSet(b []byte, private bool, n int, on bool) []byte {
	if on {
		return appendCSI(b, private, n, 'h')
	}
	return appendCSI(b, private, n, 'l')
}

// AppendMainRegion sets the main screen's scroll region, while the
// alternate screen is shown, before a snapshot switches to it: an
// emulator with a region for each screen (xterm.js) goes back to it when
// the program leaves the alternate screen; one with a region for both
// (xterm) has it replaced by AppendRegion's, as the stream did.
func (s *State) AppendMainRegion(b []byte) []byte {
	top, bottom := s.mainRegion()
	if !s.Alt || (top == 0 && bottom == s.Rows-1) {
		return b
	}
	b = append(b, 0x1b, '[')
	b = strconv.AppendInt(b, int64(top+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(bottom+1), 10)
	return append(b, 'r')
}

// AppendRegion sets the scroll region (which homes the cursor).
func (s *State) AppendRegion(b []byte) []byte {
	if s.FullRegion() {
		return append(b, "\x1b[r"...)
	}
	b = append(b, 0x1b, '[')
	b = strconv.AppendInt(b, int64(s.Top+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(s.Bottom+1), 10)
	return append(b, 'r')
}

// AppendMargins sets the left and right margins, turning DECLRMM on to
// do so, when the program set margins (DECSLRM homes the cursor). An
// emulator without margins (xterm.js) takes that CSI s for SCOSC and
// saves the cursor: a snapshot sets them before it restores the saved
// cursor.
func (s *State) AppendMargins(b []byte) []byte {
	if s.Right == 0 || s.Private&bitLRMM == 0 {
		return b
	}
	b = append(b, "\x1b[?69h\x1b["...)
	b = strconv.AppendInt(b, int64(s.Left+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(s.Right+1), 10)
	return append(b, 's')
}

// AppendModes sets the modes of the screen shown: the DEC private modes
// (origin mode among them, which homes the cursor), mouse tracking and
// encoding, the keypad, insert and newline modes, the cursor's shape and
// blinking, the kitty keyboard flags, modifyOtherKeys, the character
// sets and the title. Modes whose default is the user's choice are set
// only if the program set them.
func (s *State) AppendModes(b []byte) []byte {
	blink := privIndex(12)
	for i, m := range privModes {
		bit := uint64(1) << i
		if i == blink || (privAlways|s.PrivateSeen)&bit == 0 {
			continue
		}
		b = appendSet(b, true, m, s.Private&bit != 0)
	}
	// ?12 and DECSCUSR both set blinking: the later one wins.
	blinkSeen := s.PrivateSeen&(1<<blink) != 0
	if blinkSeen && !s.BlinkLast {
		b = appendSet(b, true, 12, s.Private&(1<<blink) != 0)
	}
	if s.ShapeSeen {
		b = append(b, 0x1b, '[')
		b = strconv.AppendInt(b, int64(s.Shape), 10)
		b = append(b, " q"...)
	}
	if blinkSeen && s.BlinkLast {
		b = appendSet(b, true, 12, s.Private&(1<<blink) != 0)
	}
	// One tracking protocol and one encoding at a time: all off, then
	// the one in force.
	for _, m := range mouseModes {
		b = appendSet(b, true, m, false)
	}
	if s.Mouse != 0 {
		b = appendSet(b, true, s.Mouse, true)
	}
	for _, m := range mouseEncModes {
		b = appendSet(b, true, m, false)
	}
	// The SGR encoding an emulator without 1005 and 1015 keeps, then
	// the one in force: the later wins where both are known.
	if sgr := int(s.MouseSGR); sgr != 0 && sgr != s.MouseEnc {
		b = appendSet(b, true, sgr, true)
	}
	if s.MouseEnc != 0 {
		b = appendSet(b, true, s.MouseEnc, true)
	}
	if s.Keypad {
		b = append(b, "\x1b="...)
	} else {
		b = append(b, "\x1b>"...)
	}
	b = appendSet(b, false, 4, s.Insert)
	b = appendSet(b, false, 20, s.Newline)
	if s.KittySeen {
		b = s.Kitty[s.screenIndex()].append(b)
	}
	if s.ModifyOtherKeys >= 0 {
		b = append(b, "\x1b[>4;"...)
		b = strconv.AppendInt(b, int64(s.ModifyOtherKeys), 10)
		b = append(b, 'm')
	}
	b = s.AppendCharsets(b)
	return s.AppendTitle(b)
}

// append sets the kitty keyboard flags and the stack under them: pop
// everything, set the oldest, push the rest.
func (k Kitty) append(b []byte) []byte {
	b = append(b, "\x1b[<"...)
	b = strconv.AppendInt(b, int64(len(k.Stack)+1), 10)
	b = append(b, 'u')
	flags := append(append([]uint8(nil), k.Stack[:k.N]...), k.Flags)
	b = append(b, "\x1b[="...)
	b = strconv.AppendInt(b, int64(flags[0]), 10)
	b = append(b, ";1u"...)
	for _, f := range flags[1:] {
		b = append(b, "\x1b[>"...)
		b = strconv.AppendInt(b, int64(f), 10)
		b = append(b, 'u')
	}
	return b
}

// AppendCharsets designates G0-G3 and invokes the one in GL.
func (s *State) AppendCharsets(b []byte) []byte {
	for g, d := range s.G {
		if d == ([2]byte{}) {
			d = [2]byte{"()*+"[g], 'B'}
		}
		b = append(b, 0x1b, d[0], d[1])
	}
	switch s.GL {
	case 0:
		return append(b, 0x0f)
	case 1:
		return append(b, 0x0e)
	case 2:
		return append(b, 0x1b, 'n')
	default:
		return append(b, 0x1b, 'o')
	}
}

// AppendTitle sets the title stacks, then the title and the icon name if
// the program set them.
func (s *State) AppendTitle(b []byte) []byte {
	osc := func(b []byte, n byte, text string) []byte {
		b = append(b, 0x1b, ']', n, ';')
		b = append(b, text...)
		return append(b, 0x1b, '\\')
	}
	// Each entry is set and pushed, oldest first.
	for _, t := range s.TitleStack.Entries() {
		b = osc(b, '2', t)
		b = append(b, "\x1b[22;2t"...)
	}
	for _, t := range s.IconStack.Entries() {
		b = osc(b, '1', t)
		b = append(b, "\x1b[22;1t"...)
	}
	switch {
	case s.TitleSeen && s.IconSeen && s.Title == s.Icon:
		b = osc(b, '0', s.Title)
	default:
		if s.IconSeen {
			b = osc(b, '1', s.Icon)
		}
		if s.TitleSeen {
			b = osc(b, '2', s.Title)
		}
	}
	return b
}

// AppendPen sets the current SGR.
func (s *State) AppendPen(b []byte) []byte { return AppendSGR(b, s.Pen) }

// AppendPrime is what a fresh emulator is fed before the stream from a
// checkpoint in state s: the tab stops, the saved cursors, the screen
// shown, the region, the modes, the pen, and the cursor where s has it.
// Where the tracker does not know them, the tab stops stay the defaults,
// a saved cursor is left unsaved, and the cursor goes to the region's
// bottom row (its first column unless the column is known), where a
// stream of lines keeps it.
func (s *State) AppendPrime(b []byte) []byte {
	if stops, ok := s.TabStops(); ok && s.TabsChanged {
		b = append(b, "\x1b[3g"...)
		for _, c := range stops {
			b = append(b, "\x1b[1;"...)
			b = strconv.AppendInt(b, int64(c+1), 10)
			b = append(b, "H\x1bH"...)
		}
	}
	if s.Alt {
		b = s.appendSaved(b, 0) // ?1049h saves it again, as it did
		b = appendSet(b, true, s.AltMode, true)
		b = s.appendSaved(b, 1)
	} else {
		b = s.appendSaved(b, 0)
	}
	b = s.AppendRegion(b)
	b = s.AppendModes(b)
	b = s.AppendMargins(b)
	b = s.AppendPen(b)
	row, col, _ := s.Cursor()
	switch {
	case s.Cur&curRow == 0:
		row, col = s.Bottom, 0
	case s.Cur&curCol == 0:
		col = 0
	}
	return s.AppendCursorAt(b, row, col)
}

// appendSaved saves, on a fresh emulator's screen, the cursor saved on
// screen i (0 main, 1 alternate) if its position is known: the position,
// the pen and the character sets, then DECSC.
func (s *State) appendSaved(b []byte, i int) []byte {
	sv := s.Saved[i]
	if !sv.Valid || !sv.At {
		return b
	}
	b = append(b, 0x1b, '[')
	b = strconv.AppendInt(b, int64(sv.Row+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(sv.Col+1), 10)
	b = append(b, 'H')
	st := State{Pen: sv.Pen, G: sv.G, GL: sv.GL}
	b = st.AppendPen(b)
	b = st.AppendCharsets(b)
	return append(b, 0x1b, '7')
}

// AppendCursorAt moves the cursor to row, col (0-based, on the screen),
// counting rows from the region's top and columns from the left margin
// in origin mode.
func (s *State) AppendCursorAt(b []byte, row, col int) []byte {
	if s.Private&bitOrigin != 0 {
		row -= s.Top
		if s.Private&bitLRMM != 0 {
			col -= s.Left
		}
	}
	b = append(b, 0x1b, '[')
	b = strconv.AppendInt(b, int64(max(row, 0)+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(max(col, 0)+1), 10)
	return append(b, 'H')
}

// AppendDefaults brings an emulator that shows s back to the modes of a
// terminal nobody wrote to, without moving the cursor or clearing
// anything: it leaves the alternate screen (as the program would have),
// then DECSTR resets the pen, region, margins, origin, wrap and insert
// modes, cursor keys, keypad, character sets and cursor visibility; the
// rest is reset one by one where the program changed it: the other
// private modes (mouse tracking and encoding, focus events, bracketed
// paste, reverse video...), newline mode, the cursor's shape, the kitty
// keyboard flags and modifyOtherKeys. The title stays. It is what
// follows a dead terminal's old screen before a new program's output.
func (s *State) AppendDefaults(b []byte) []byte {
	if s.Alt {
		if s.KittySeen { // each screen has its own flags
			b = Kitty{}.append(b)
		}
		b = appendSet(b, true, s.AltMode, false)
	}
	b = append(b, "\x1b[!p"...)
	initial := Initial(s.Cols, s.Rows)
	for i, m := range privModes {
		bit := uint64(1) << i
		// DECSTR turned origin mode off; ?6 would home the cursor.
		if m == 6 || s.PrivateSeen&bit == 0 {
			continue
		}
		b = appendSet(b, true, m, initial.Private&bit != 0)
	}
	if s.Mouse != 0 {
		b = appendSet(b, true, s.Mouse, false)
	}
	if sgr := int(s.MouseSGR); sgr != 0 && sgr != s.MouseEnc {
		b = appendSet(b, true, sgr, false)
	}
	if s.MouseEnc != 0 {
		b = appendSet(b, true, s.MouseEnc, false)
	}
	if s.Newline {
		b = appendSet(b, false, 20, false)
	}
	if s.ShapeSeen {
		b = append(b, "\x1b[0 q"...)
	}
	if s.KittySeen {
		b = Kitty{}.append(b)
	}
	if s.ModifyOtherKeys >= 0 {
		b = append(b, "\x1b[>4m"...)
	}
	return b
}

// AppendCursorVisible shows or hides the cursor as s has it.
func (s *State) AppendCursorVisible(b []byte) []byte {
	return appendSet(b, true, 25, s.CursorVisible())
}
