// Package vtstate keeps, for a stream of terminal output, the state a
// terminal emulator holds besides the cells: which screen is shown and
// where the alternate one was entered, the DEC private and ANSI modes
// (cursor keys, keypad, origin, wrap, cursor visibility, mouse tracking
// and encoding, focus events, bracketed paste, insert...), the cursor's
// shape, the scroll region, the character sets, the title, the current
// SGR, whether tab stops were changed, and the kitty keyboard flags.
//
// It is what a persistent terminal's SNAPSHOT needs to restore modes that
// were set before the journal's tail (sidecar/persist). A Tracker is fed
// every byte a program writes, so it is made to cost little: text is
// skipped with bytes.IndexByte, and only escape sequences are parsed
// (screen/vtparse). It keeps no cells and no cursor position: the screen
// package renders those from the tail.
package vtstate

import "strings"

// The DEC private modes kept as plain on/off bits, by index. The order is
// part of the handover format (State travels as JSON between server
// images): append only.
var privModes = [...]int{
	1,    // DECCKM application cursor keys
	5,    // DECSCNM reverse video
	6,    // DECOM origin mode
	7,    // DECAWM autowrap
	8,    // DECARM autorepeat
	12,   // cursor blink (att610)
	25,   // DECTCEM cursor visible
	45,   // reverse wraparound
	69,   // DECLRMM left/right margin mode
	1001, // highlight mouse tracking
	1004, // focus events
	1007, // alternate scroll
	1034, // eightBitInput
	1035, // numLock
	1036, // metaSendsEscape
	1037, // deleteIsDEL
	1039, // altSendsEscape
	1042, // bellIsUrgent
	1043, // popOnBell
	2004, // bracketed paste
	2026, // synchronized output
	2027, // grapheme clusters
	2031, // colour palette updates
	2048, // in-band resize
	1010, // scroll to bottom on output
	1011, // scroll to bottom on key press
	40,   // allow 80/132
	4,    // DECSCLM smooth scroll
}

// privIndex maps a mode number to its bit in State.Private, -1 if none.
func privIndex(n int) int {
	for i, m := range privModes {
		if m == n {
			return i
		}
	}
	return -1
}

var (
	bitOrigin  = uint64(1) << privIndex(6)
	bitWrap    = uint64(1) << privIndex(7)
	bitVisible = uint64(1) << privIndex(25)
	bitLRMM    = uint64(1) << privIndex(69)
	// privDefault: what is set in a terminal nobody changed.
	privDefault = bitWrap | bitVisible | uint64(1)<<privIndex(8)
	// privAlways are restored whether or not the program set them: their
	// defaults are the same in every emulator. The others are restored
	// only once the program set them, since their defaults are the
	// user's choice (meta keys, blink, reverse video).
	privAlways = uint64(1)<<privIndex(1) | bitOrigin | bitWrap | bitVisible |
		uint64(1)<<privIndex(45) | uint64(1)<<privIndex(1004) | uint64(1)<<privIndex(2004)
)

// Mouse tracking protocols (one at a time, as in xterm and xterm.js) and
// encodings.
var (
	mouseModes    = [...]int{9, 1000, 1002, 1003}
	mouseEncModes = [...]int{1005, 1006, 1015, 1016}
)

// Color is an SGR colour: Kind says how it was given, V its value (an
// index for Kind16 and Kind256, 0xRRGGBB for KindRGB).
type Color struct {
	Kind uint8  `json:"k,omitempty"`
	V    uint32 `json:"v,omitempty"`
}

const (
	KindDefault = iota
	Kind16      // 30-37, 90-97 (V 0-15)
	Kind256     // 38;5;n
	KindRGB     // 38;2;r;g;b
)

// Pen flags.
const (
	Bold uint16 = 1 << iota
	Dim
	Italic
	Blink
	Inverse
	Hidden
	Strike
	Overline
)

// Pen is the current SGR.
type Pen struct {
	Flags     uint16 `json:"f,omitempty"`
	Underline uint8  `json:"u,omitempty"` // 0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed
	FG        Color  `json:"fg,omitzero"`
	BG        Color  `json:"bg,omitzero"`
	UL        Color  `json:"ul,omitzero"`
}

// Kitty is one screen's kitty keyboard state: the flags in force and the
// ones pushed under them (oldest first).
type Kitty struct {
	Flags uint8    `json:"f,omitempty"`
	Stack [8]uint8 `json:"s"`
	N     uint8    `json:"n,omitempty"`
}

// Saved is what DECSC (and ?1048, ?1049) saves besides the position: the
// pen and the character sets, per screen as in xterm.
type Saved struct {
	Valid bool       `json:"valid,omitempty"`
	Pen   Pen        `json:"pen,omitzero"`
	G     [4][2]byte `json:"g"`
	GL    uint8      `json:"gl,omitempty"`
	// At says the tracker knew the cursor's position when it was saved:
	// Row and Col, 0-based on the screen (cursor.go).
	At  bool   `json:"at,omitempty"`
	Row uint16 `json:"row,omitempty"`
	Col uint16 `json:"col,omitempty"`
}

// State is the tracked state at one offset of the stream. It is a plain
// value (the strings are immutable): copying it is how a checkpoint is
// taken.
type State struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
	// Private holds the modes of privModes by bit; PrivateSeen says which
	// of them the program set or reset.
	Private     uint64 `json:"private"`
	PrivateSeen uint64 `json:"privateSeen,omitempty"`
	Mouse       int    `json:"mouse,omitempty"`    // 0 or 9, 1000, 1002, 1003
	MouseEnc    int    `json:"mouseEnc,omitempty"` // 0 or 1005, 1006, 1015, 1016
	Keypad      bool   `json:"keypad,omitempty"`   // DECKPAM (and ?66)
	Insert      bool   `json:"insert,omitempty"`   // IRM (4)
	Newline     bool   `json:"newline,omitempty"`  // LNM (20)
	// Alt says the alternate screen is shown, entered by AltMode (47,
	// 1047 or 1049) with the sequence that starts at offset AltAt.
	Alt bool `json:"alt,omitempty"`
	// MouseSGR is the encoding an emulator that knows only 1006 and 1016
	// uses (xterm.js, which ignores 1005 and 1015): the last of those
	// two set, 0 once one was reset. (Small, as MainTop and MainBottom
	// are: they fill what the fields before them leave of a word, and a
	// terminal keeps a State for every checkpoint.)
	MouseSGR int16  `json:"mouseSGR,omitempty"`
	AltMode  int    `json:"altMode,omitempty"`
	AltAt    uint64 `json:"altAt,omitempty"`
	// Shape is the last DECSCUSR parameter, ShapeSeen whether there was
	// one; BlinkLast says ?12 came after it.
	Shape     int  `json:"shape,omitempty"`
	ShapeSeen bool `json:"shapeSeen,omitempty"`
	BlinkLast bool `json:"blinkLast,omitempty"`
	// The scroll region, 0-based and inclusive, of the screen shown. As in
	// xterm.js, each screen has its own: MainTop and MainBottom keep the
	// main screen's while the alternate one is shown (MainBottom 0: the
	// whole screen, as in a state from a binary that kept one region),
	// and the alternate screen starts each time with the whole screen.
	MainTop    uint16 `json:"mainTop,omitempty"`
	MainBottom uint16 `json:"mainBottom,omitempty"`
	Top        int    `json:"top"`
	Bottom     int    `json:"bottom"`
	// The left and right margins (DECSLRM, set while DECLRMM is on),
	// 0-based and inclusive; Right 0 means none were set, the whole
	// width (a margin pair always has Right > Left, and a state from a
	// binary before margins were kept has neither).
	Left  int `json:"left,omitempty"`
	Right int `json:"right,omitempty"`
	// G holds the designations of G0-G3 (the intermediate and final
	// bytes after ESC, 0 for none: ASCII); GL the set invoked into GL.
	G  [4][2]byte `json:"g"`
	GL uint8      `json:"gl,omitempty"`
	// Title and icon name (OSC 0, 1, 2), and whether they were set.
	Title     string `json:"title,omitempty"`
	TitleSeen bool   `json:"titleSeen,omitempty"`
	Icon      string `json:"icon,omitempty"`
	IconSeen  bool   `json:"iconSeen,omitempty"`
	// The title and icon name stacks (CSI 22 t pushes, CSI 23 t pops):
	// two, as xterm.js keeps them.
	TitleStack Stack `json:"titleStack,omitempty"`
	IconStack  Stack `json:"iconStack,omitempty"`
	Pen        Pen   `json:"pen,omitzero"`
	// Saved cursors of the main and the alternate screen.
	Saved [2]Saved `json:"saved"`
	// Kitty keyboard flags of the main and the alternate screen, and
	// whether the program used the protocol at all.
	Kitty     [2]Kitty `json:"kitty"`
	KittySeen bool     `json:"kittySeen,omitempty"`
	// ModifyOtherKeys is xterm's modifyOtherKeys level (CSI > 4 ; n m),
	// -1 when the program never set it.
	ModifyOtherKeys int `json:"modifyOtherKeys"`
	// TabsChanged says tab stops were set or cleared since the last
	// reset, the first time at offset TabsAt.
	TabsChanged bool `json:"tabsChanged,omitempty"`
	// AltTabsChanged says tab stops were set or cleared while the
	// alternate screen is shown: as in xterm.js, it has stops of its
	// own, the defaults each time it is entered.
	AltTabsChanged bool `json:"altTabsChanged,omitempty"`
	// TabsKnown says Tabs holds the stops (once TabsChanged), one byte
	// a column, 1 for a stop: unknown once a stop was set or cleared
	// where the tracker did not know the column (cursor.go).
	TabsKnown bool   `json:"tabsKnown,omitempty"`
	TabsAt    uint64 `json:"tabsAt,omitempty"`
	Tabs      string `json:"tabs,omitempty"`
	// The cursor, where the tracker follows it (cursor.go): Row and
	// Col, 0-based on the screen, valid as the Cur bits say.
	Row uint16 `json:"row,omitempty"`
	Col uint16 `json:"col,omitempty"`
	Cur uint8  `json:"cur,omitempty"`
	// RegionOdd: the screen package's region may differ (cursor.go).
	RegionOdd bool `json:"regionOdd,omitempty"`
}

// Initial is the state of a terminal of the given size nobody wrote to.
func Initial(cols, rows int) State {
	return State{Cols: cols, Rows: rows, Private: privDefault, Top: 0, Bottom: max(rows, 1) - 1, ModifyOtherKeys: -1, Cur: curRow | curCol}
}

// Mode reports a mode's state: set, and known (false for a mode the
// tracker does not keep: a DECRQM answer would say "not recognised").
// private selects DEC private modes (CSI ? n h) over ANSI ones (CSI n h).
func (s *State) Mode(n int, private bool) (set, known bool) {
	if !private {
		switch n {
		case 4:
			return s.Insert, true
		case 20:
			return s.Newline, true
		}
		return false, false
	}
	switch n {
	case 47, 1047, 1049:
		return s.Alt, true
	case 66:
		return s.Keypad, true
	}
	for _, m := range mouseModes {
		if m == n {
			return s.Mouse == n, true
		}
	}
	for _, m := range mouseEncModes {
		if m == n {
			return s.MouseEnc == n, true
		}
	}
	if i := privIndex(n); i >= 0 {
		return s.Private&(1<<i) != 0, true
	}
	return false, false
}

// CursorVisible reports DECTCEM (?25).
func (s *State) CursorVisible() bool { return s.Private&bitVisible != 0 }

// CursorShape returns the last DECSCUSR parameter (0: the emulator's
// default).
func (s *State) CursorShape() int { return s.Shape }

// mainRegion is the main screen's scroll region while the alternate
// screen is shown.
func (s *State) mainRegion() (top, bottom int) {
	top, bottom = int(s.MainTop), int(s.MainBottom)
	if bottom <= top || bottom >= s.Rows {
		return 0, max(s.Rows, 1) - 1
	}
	return top, bottom
}

// FullRegion reports whether the scroll region is the whole screen.
func (s *State) FullRegion() bool { return s.Top == 0 && s.Bottom == s.Rows-1 }

func (s *State) setPrivate(n int, on bool) {
	i := privIndex(n)
	if i < 0 {
		return
	}
	if on {
		s.Private |= 1 << i
	} else {
		s.Private &^= 1 << i
	}
	s.PrivateSeen |= 1 << i
}

// resetRegion makes the scroll region the whole screen, and clears the
// left and right margins.
func (s *State) resetRegion() {
	s.Top, s.Bottom = 0, max(s.Rows, 1)-1
	s.resetMargins()
}

func (s *State) resetMargins() { s.Left, s.Right = 0, 0 }

// setMargins is DECSLRM with 1-based margins, ignored as xterm ignores
// an empty range; it homes the cursor.
func (s *State) setMargins(left, right int) {
	left, right = left-1, min(right, s.Cols)-1
	if left < 0 || left >= right {
		return
	}
	defer s.home()
	s.Left, s.Right = left, right
	if left == 0 && right == s.Cols-1 {
		s.resetMargins()
	}
}

// Margins reports the left and right margins, 0-based and inclusive:
// the whole width when none are set.
func (s *State) Margins() (left, right int) {
	if s.Right == 0 {
		return 0, max(s.Cols, 1) - 1
	}
	return s.Left, s.Right
}

// maxTitles is how deep each title stack goes, as in xterm and xterm.js;
// a push onto a full stack drops the oldest entry.
const maxTitles = 10

// Stack is a title stack: its entries, oldest first, each ended by a
// NUL (which no title holds: the parser keeps no control character in
// an OSC). A string, so that a State stays a small comparable value:
// checkpoints are copies of it, a few dozen a terminal.
type Stack string

const stackEnd = "\x00"

// Entries are the stack's entries, oldest first.
func (k Stack) Entries() []string {
	if k == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(k), stackEnd), stackEnd)
}

// Len is how many entries the stack holds.
func (k Stack) Len() int { return strings.Count(string(k), stackEnd) }

func (k *Stack) push(v string) {
	if k.Len() == maxTitles {
		_, rest, _ := strings.Cut(string(*k), stackEnd)
		*k = Stack(rest)
	}
	*k += Stack(v + stackEnd)
}

func (k *Stack) pop() (string, bool) {
	if *k == "" {
		return "", false
	}
	s := strings.TrimSuffix(string(*k), stackEnd)
	i := strings.LastIndex(s, stackEnd)
	*k = Stack(s[:i+1])
	return s[i+1:], true
}
