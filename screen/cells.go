package screen

import "unicode/utf8"

// Attr is a set of the style attributes a cell was written with.
type Attr uint16

// The attributes, as SGR sets them. They are reported as written: a
// renderer applies Inverse (swap colours) and Hidden itself, so that it
// can also draw the cursor as an inverse block over an inverse cell.
const (
	AttrBold      Attr = Attr(flagBold)
	AttrFaint     Attr = Attr(flagDim)
	AttrItalic    Attr = Attr(flagItalic)
	AttrUnderline Attr = Attr(flagUnderline)
	AttrBlink     Attr = Attr(flagBlink)
	AttrInverse   Attr = Attr(flagInverse)
	AttrHidden    Attr = Attr(flagHidden)
	AttrStrike    Attr = Attr(flagStrike)
)

// Has reports whether every attribute in b is set in a.
func (a Attr) Has(b Attr) bool { return a&b == b }

// Color is a cell's foreground or background resolved to RGB through the
// screen's palette (xterm's defaults, changed by OSC 4) and default
// colours (OSC 10 and 11).
type Color struct {
	R, G, B uint8
	// Default says the program left the terminal's default colour; the
	// RGB is then that default.
	Default bool
	// Index is the palette entry the program chose (0..15 from SGR 30-37,
	// 90-97 and their backgrounds, 0..255 from 38;5;N), or -1 for the
	// default colour and for true colour (38;2;R;G;B).
	Index int16
}

// Cell is one character position, in the form a renderer needs.
type Cell struct {
	// Text is the character: a base rune and any combining marks that
	// followed it. It is "" for a blank cell and for the right half of a
	// wide character.
	Text string
	// Width is 2 for the left half of a wide character, 0 for its right
	// half, and 1 otherwise. A half whose partner was overwritten is
	// reported as a blank of width 1, as it is shown.
	Width  int
	FG, BG Color
	Attrs  Attr
}

// Cells appends the cells of line n to dst[:0] and returns it. Lines are
// numbered as for Line: 1..rows are the screen, -1..-ScrollbackLen() the
// scrollback (-1 newest). A line always has one cell per column (a
// scrollback line that was stored trimmed, or that is shorter because the
// screen was resized, is padded with default blanks; a longer one is cut);
// n outside both ranges yields dst[:0].
func (s *Screen) Cells(n int, dst []Cell) []Cell {
	dst = dst[:0]
	var l []cell
	switch {
	case n >= 1 && n <= s.rows:
		l = s.line(n - 1)
	case n <= -1 && -n <= s.scroll.len():
		l = s.scroll.at(-n)
	default:
		return dst
	}
	for i := 0; i < s.cols; i++ {
		c := cell{}
		if i < len(l) {
			c = l[i]
		}
		dst = append(dst, s.publicCell(l, i, c))
	}
	return dst
}

// publicCell resolves cell c, at index i of line l, for Cells.
func (s *Screen) publicCell(l []cell, i int, c cell) Cell {
	out := Cell{
		Width: 1,
		FG:    s.resolve(c.fg, 0),
		BG:    s.resolve(c.bg, 1),
		Attrs: Attr(c.flags & styleMask),
	}
	switch {
	case c.flags&flagWideTrail != 0:
		if i > 0 && l[i-1].flags&flagWideLead != 0 {
			out.Width = 0
		}
		return out
	case c.flags&flagWideLead != 0:
		if i+1 >= len(l) || l[i+1].flags&flagWideTrail == 0 {
			return out
		}
		out.Width = 2
	}
	switch {
	case c.r == 0:
	case c.r < 0:
		if idx := int(-c.r - 1); idx < len(s.clusters) {
			out.Text = s.clusters[idx]
		}
	case c.r < utf8.RuneSelf:
		out.Text = asciiStrings[c.r]
	default:
		out.Text = string(c.r)
	}
	return out
}

// asciiStrings lets Cells name printable ASCII without allocating: a
// screen of text is mostly ASCII, and a renderer reads every cell.
var asciiStrings = func() (t [utf8.RuneSelf]string) {
	for i := range t {
		t[i] = string(rune(i))
	}
	return t
}()

// resolve turns a stored colour into RGB; which is 0 for a foreground, 1
// for a background (the OSC 10/11 slot of the default).
func (s *Screen) resolve(c color, which int) Color {
	v := uint32(c &^ colorKindMsk)
	idx := int16(-1)
	switch c & colorKindMsk {
	case colorKind16, colorKind256:
		idx = int16(v)
		v = s.colors.paletteColor(int(v))
	case colorKindRGB:
	default:
		return rgb(s.colors.dynamicColor(which), true, -1)
	}
	return rgb(v, false, idx)
}

func rgb(v uint32, def bool, idx int16) Color {
	return Color{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), Default: def, Index: idx}
}

// DefaultColors returns the default foreground and background (xterm's
// dark defaults unless OSC 10 or 11 set them) and the cursor colour
// (OSC 12; by default the default foreground's).
func (s *Screen) DefaultColors() (fg, bg, cursor Color) {
	return rgb(s.colors.dynamicColor(0), true, -1),
		rgb(s.colors.dynamicColor(1), true, -1),
		rgb(s.colors.dynamicColor(2), true, -1)
}
