package screen

import "github.com/ptyplex/ptyplex/screen/vtparse"

// Options configures a Screen. The zero value gives the defaults.
type Options struct {
	Scrollback int // scrollback ring capacity in lines; 0 means 10000; negative means none
	Unhandled  int // capacity of the unhandled-sequence ring; 0 means 10
	// Version, if set, is the name and version XTVERSION (CSI > q)
	// answers, as DCS > | Version ST; empty leaves the query unanswered
	// (recorded as unhandled), as a terminal that does not implement it.
	Version string
	// ClearToScrollback makes ED 2 (erase the whole display) on the main
	// screen first move the rows down to the last one in use into the
	// scrollback, as alacritty (interminai's emulator), VTE and tmux do,
	// so the text before a clear (bash's Ctrl-L) can still be read; xterm
	// and xterm.js only erase them, the default here.
	ClearToScrollback bool
}

const (
	defaultScrollback = 10000
	defaultUnhandled  = 10
	maxClusters       = 1 << 16 // cap on distinct base+combining clusters kept
	maxClusterBytes   = 32      // cap on one cluster's UTF-8 length
)

// buffer is one screen's grid: the main screen and the alternate screen
// each have one, so switching is a pointer swap and the main content
// survives a full-screen program.
//
// The rows form a ring: logical row r is lines[(base+r) % len(lines)], so
// scrolling the whole screen (the common case: output flowing past) moves
// base instead of shuffling rows.
type buffer struct {
	lines [][]cell
	// wrapped[i] says physical row i was left by an autowrap, so it and
	// the next row are one logical line (what reflow re-joins).
	wrapped []bool
	base    int
	saved   cursorState // DECSC/DECRC slot; each buffer has its own, as in xterm
}

// row returns logical row r.
func (b *buffer) row(r int) []cell { return b.lines[b.phys(r)] }

// phys maps logical row r to its index in lines.
func (b *buffer) phys(r int) int {
	i := b.base + r
	if i >= len(b.lines) {
		i -= len(b.lines)
	}
	return i
}

func (b *buffer) isWrapped(r int) bool     { return b.wrapped[b.phys(r)] }
func (b *buffer) setWrapped(r int, w bool) { b.wrapped[b.phys(r)] = w }

// linear reorders the ring so that base is 0, for code that needs the
// rows as a plain slice (resizing).
func (b *buffer) linear() {
	if b.base == 0 {
		return
	}
	rotate(b.lines, b.base)
	rotate(b.wrapped, b.base)
	b.base = 0
}

// cursorState is what DECSC saves: position, pen, wrap state and
// character sets (no modes, as alacritty and xterm.js: origin mode is not
// saved).
type cursorState struct {
	row, col    int
	pen         attrs
	pendingWrap bool
	charsets    [4]charset
	gl          int
	valid       bool
}

// Screen is a terminal emulator: feed it the PTY's output with Write and
// read the resulting screen with Line, Cursor and friends. It is not safe
// for concurrent use.
type Screen struct {
	cols, rows int

	main, alt *buffer
	cur       *buffer // main or alt
	altActive bool

	// Cursor and pen. col may equal cols-1 with pendingWrap set: the next
	// printable character wraps first (the VT "delayed wrap"). It is set
	// with autowrap off too, and then taken only once autowrap is back.
	row, col    int
	pen         attrs
	pendingWrap bool
	lastPrinted int32 // for REP; 0 when there is nothing to repeat

	// Scroll region, inclusive, 0-based: top/bottom from DECSTBM,
	// left/right from DECSLRM (only settable while DECLRMM ?69 is on).
	top, bottom int
	left, right int
	lrmm        bool // DECLRMM ?69: CSI s sets margins instead of saving the cursor

	tabs []bool

	// Modes.
	autowrap      bool // DECAWM ?7
	origin        bool // DECOM ?6
	insert        bool // IRM 4
	newline       bool // LNM 20
	cursorVisible bool // DECTCEM ?25
	appCursor     bool // DECCKM ?1
	appKeypad     bool // DECKPAM / DECKPNM
	bracketed     bool // ?2004
	cursorStyle   int  // DECSCUSR
	inert         map[int]bool

	charsets [4]charset // G0-G3
	gl       int        // which of them is invoked into GL (SI, SO, LS2, LS3)

	colors colorTable // OSC 4/10/11/12 answers

	title  string
	titles []string // stack for CSI 22 t / CSI 23 t

	scroll scrollback

	clusters     []string
	clusterIndex map[string]int32
	clusterBuf   []byte // scratch for extendCluster

	parser vtparse.Parser
	seq    *vtparse.Seq // the sequence being dispatched
	// topParams holds the parameters of a sequence other than SGR
	// that came with sub-parameters, reduced to one per field.
	topParams []int
	replies   []byte
	version   string // what XTVERSION answers (Options.Version)
	// clearPushes is Options.ClearToScrollback.
	clearPushes bool
	unknown     unhandledRing

	marks       []Mark // shell integration marks, oldest first (marks.go)
	marksTotal  int    // marks ever received (marks.go)
	markKey     string // when set, the param every mark must carry (marks.go)
	marksForged int    // marks refused for lacking markKey (marks.go)
	scrolledOff int    // lines that ever scrolled off the top of the main screen
}

// New returns a blank screen of the given size. Sizes below 1 are clamped.
func New(cols, rows int, opt Options) *Screen {
	cols, rows = clampSize(cols, rows)
	sb := opt.Scrollback
	switch {
	case sb == 0:
		sb = defaultScrollback
	case sb < 0:
		sb = 0
	}
	uh := opt.Unhandled
	if uh <= 0 {
		uh = defaultUnhandled
	}
	s := &Screen{
		cols:        cols,
		rows:        rows,
		version:     opt.Version,
		clearPushes: opt.ClearToScrollback,
		scroll:      scrollback{capacity: sb},
		unknown:     unhandledRing{capacity: uh},
	}
	s.main = newBuffer(cols, rows)
	s.alt = newBuffer(cols, rows)
	s.cur = s.main
	s.hardReset()
	return s
}

func clampSize(cols, rows int) (int, int) {
	if cols < 1 {
		cols = 1
	}
	if rows < 1 {
		rows = 1
	}
	// Absurd sizes would only exhaust memory; real terminals stop far below.
	if cols > 4096 {
		cols = 4096
	}
	if rows > 4096 {
		rows = 4096
	}
	return cols, rows
}

func newBuffer(cols, rows int) *buffer {
	b := &buffer{lines: make([][]cell, rows), wrapped: make([]bool, rows)}
	for i := range b.lines {
		b.lines[i] = make([]cell, cols)
	}
	return b
}

// Size returns the screen size in cells.
func (s *Screen) Size() (cols, rows int) { return s.cols, s.rows }

// Cursor returns the 0-based cursor position on the visible screen. In
// the pending-wrap state the column is the last one, not one past it.
func (s *Screen) Cursor() (row, col int) {
	col = s.col
	if col >= s.cols {
		col = s.cols - 1
	}
	return s.row, col
}

// PendingWrap reports whether a wrap is pending: the last character went
// into the last column (Cursor's), and the next one goes on the next line
// rather than over it. With autowrap (DECAWM) off it is false: the next
// character goes over the last one. The screen still remembers that the
// last column was written, as alacritty and xterm.js do, so that the
// character after a ?7h wraps.
func (s *Screen) PendingWrap() bool { return s.pendingWrap && s.autowrap }

// ScrollRegion returns the scroll region (DECSTBM): its first and last
// rows, 0-based, both included; the whole screen unless a program set one.
func (s *Screen) ScrollRegion() (top, bottom int) { return s.top, s.bottom }

// Margins reports the left and right margins (DECSLRM), 0-based and
// inclusive: the whole width when none are set.
func (s *Screen) Margins() (left, right int) { return s.left, s.right }

// InsertMode reports IRM (CSI 4 h).
func (s *Screen) InsertMode() bool { return s.insert }

// NewlineMode reports LNM (CSI 20 h).
func (s *Screen) NewlineMode() bool { return s.newline }

// CursorVisible reports DECTCEM (?25).
func (s *Screen) CursorVisible() bool { return s.cursorVisible }

// Title returns the window title last set by OSC 0 or OSC 2.
func (s *Screen) Title() string { return s.title }

// AltScreen reports whether the alternate screen is shown.
func (s *Screen) AltScreen() bool { return s.altActive }

// BracketedPaste reports whether ?2004 is set.
func (s *Screen) BracketedPaste() bool { return s.bracketed }

// AppCursorKeys reports whether application cursor keys (?1) are set.
func (s *Screen) AppCursorKeys() bool { return s.appCursor }

// AppKeypad reports whether the keypad is in application mode (ESC =).
func (s *Screen) AppKeypad() bool { return s.appKeypad }

// AutoWrap reports DECAWM (?7).
func (s *Screen) AutoWrap() bool { return s.autowrap }

// CursorStyle returns the last DECSCUSR parameter (0 = terminal default).
func (s *Screen) CursorStyle() int { return s.cursorStyle }

// PrivateMode reports a DEC private mode that the screen tracks but does
// not act on (mouse reporting 1000-1006, focus events 1004, synchronized
// output 2026, cursor blink 12, ...), plus the ones it acts on.
func (s *Screen) PrivateMode(n int) bool {
	switch n {
	case 1:
		return s.appCursor
	case 66:
		return s.appKeypad
	case 6:
		return s.origin
	case 7:
		return s.autowrap
	case 25:
		return s.cursorVisible
	case 47, 1047, 1049:
		return s.altActive
	case 2004:
		return s.bracketed
	case 69:
		return s.lrmm
	}
	return s.inert[n]
}

// TakeReplies returns the bytes the terminal would send back to the
// program (answers to DSR, CPR, DA) produced since the last call, or nil.
// The caller writes them to the PTY; Write itself never blocks on them.
func (s *Screen) TakeReplies() []byte {
	if len(s.replies) == 0 {
		return nil
	}
	r := s.replies
	s.replies = nil
	return r
}

// line returns row r of the visible buffer.
func (s *Screen) line(r int) []cell { return s.cur.row(r) }
