package screen

// A colour is packed into 32 bits: the top byte says which form the
// application used, the low 24 bits hold the value. Keeping the form lets
// the ANSI renderer reproduce exactly the SGR the program sent (31 stays
// 31, 38;5;1 stays 38;5;1), which agents diffing colours rely on.
type color uint32

const (
	colorDefault color = 0
	colorKind16  color = 1 << 24 // value 0..15 (8..15 = bright, from 90-97/100-107)
	colorKind256 color = 2 << 24 // value 0..255 (38;5;N)
	colorKindRGB color = 3 << 24 // value 0xRRGGBB (38;2;R;G;B)
	colorKindMsk color = 0xff << 24
)

// Attribute flags. widePrimary/wideTrail describe cell geometry rather
// than style, but live in the same word so a cell stays 16 bytes.
const (
	flagBold uint16 = 1 << iota
	flagDim
	flagItalic
	flagUnderline
	flagBlink
	flagInverse
	flagHidden
	flagStrike

	flagWideLead  // first cell of a two-cell character
	flagWideTrail // second cell of a two-cell character (r is 0)
	flagWrapPad   // blank left at the margin by a wide character that wrapped; reflow drops it

	styleMask = flagBold | flagDim | flagItalic | flagUnderline | flagBlink |
		flagInverse | flagHidden | flagStrike
)

// attrs is the pen: the style applied to newly written cells.
type attrs struct {
	fg, bg color
	flags  uint16
}

// cell is one character position. r == 0 means blank (rendered as a
// space). A negative r is an index (-r-1) into Screen.clusters, used for
// a base character followed by combining marks.
type cell struct {
	r int32
	attrs
}

// blank returns an erased cell. Erasure keeps the current background
// (xterm's "background colour erase") but no other style.
func blankCell(bg color) cell { return cell{attrs: attrs{bg: bg}} }

// isDefaultBlank reports whether c looks like an untouched cell (a blank
// or a space with nothing drawn over the background), which lets
// renderers trim trailing cells exactly as plain text trims spaces.
func (c cell) isDefaultBlank() bool {
	return (c.r == 0 || c.r == ' ') && c.bg == colorDefault &&
		c.flags&(flagInverse|flagUnderline|flagStrike|flagWideLead|flagWideTrail) == 0
}
