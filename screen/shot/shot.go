// Package shot renders a terminal screen to a PNG image: what the
// emulator in package screen holds, as a terminal window would show it.
//
// Every cell is CellWidth x CellHeight pixels and drawn in Go Mono (its
// regular, bold, italic and bold italic faces, which ship inside the
// binary). Colours are the screen's, resolved through its palette; bold
// text uses the bold face, faint text is blended halfway to its
// background, inverse swaps the colours, hidden text is not drawn, and
// underline and strikethrough are one-pixel lines. Glyph edges are
// antialiased in 16 steps, so that a screen of up to 16 colour pairs
// fits a 256-colour palette and encodes small and fast. A wide character
// spans two cells. The cursor, when visible, is a block drawn by swapping
// the colours of the cell under it.
//
// Limits: Go Mono covers Latin, Greek, Cyrillic, box drawing and block
// elements, but no CJK, emoji, Braille or most symbols. A character whose
// base the font lacks is drawn as an outlined box as wide as the
// character (two cells for CJK and emoji), so the layout stays true even
// where the glyph cannot be shown; combining marks the font lacks are
// left out. Blinking text is drawn steady and the cursor is always a
// block, whatever shape the program asked for.
//
// Output is deterministic: the same screen gives the same PNG bytes (on
// one architecture and Go release; the rasteriser's floating point and
// the PNG encoder's compression are not promised across them).
package shot

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"

	"github.com/ptyplex/ptyplex/screen"
	"golang.org/x/text/unicode/norm"
)

// MaxPixels bounds an image. A screen may be 4096x4096 cells, which
// would be two gigapixels; 8 Mi pixels (up to 32 MiB while drawing) covers a
// 240x200 screen and keeps a daemon that renders on request small.
const MaxPixels = 8 << 20

// Snapshot is a copy of what a screen shows. Take it while holding
// whatever lock guards the Screen, then render it without the lock, so
// that the program's output is not held up by PNG encoding.
type Snapshot struct {
	Cols, Rows int
	// Cells holds Rows lines of Cols cells, the top line first.
	Cells                []screen.Cell
	CursorRow, CursorCol int // 0-based
	CursorVisible        bool
	// FG and BG are the default colours, for the image's border pixels
	// and for cells that reset them.
	FG, BG screen.Color
}

// Take copies the visible screen of s. A screen too large to render is
// refused here, before its cells are copied.
func Take(s *screen.Screen) (*Snapshot, error) {
	cols, rows := s.Size()
	if err := checkSize(cols, rows); err != nil {
		return nil, err
	}
	sn := &Snapshot{Cols: cols, Rows: rows, Cells: make([]screen.Cell, 0, cols*rows)}
	var line []screen.Cell
	for n := 1; n <= rows; n++ {
		line = s.Cells(n, line)
		sn.Cells = append(sn.Cells, line...)
	}
	sn.CursorRow, sn.CursorCol = s.Cursor()
	sn.CursorVisible = s.CursorVisible()
	sn.FG, sn.BG, _ = s.DefaultColors()
	return sn, nil
}

// checkSize refuses a screen whose image would pass MaxPixels.
func checkSize(cols, rows int) error {
	w, h := cols*CellWidth, rows*CellHeight
	if w*h > MaxPixels {
		return fmt.Errorf("a %dx%d screen renders to %dx%d pixels, more than the %d a screenshot may have; resize the terminal smaller",
			cols, rows, w, h, MaxPixels)
	}
	return nil
}

// Bounds returns the image size the snapshot renders to.
func (sn *Snapshot) Bounds() image.Rectangle {
	return image.Rect(0, 0, sn.Cols*CellWidth, sn.Rows*CellHeight)
}

// Image renders the snapshot. A screen of at most 16 pairs of
// foreground and background colours (most are: a shell, vim, a menu)
// gives an *image.Paletted, which encodes several times faster and
// smaller than the *image.RGBA that other screens give; both hold the
// same pixels.
func (sn *Snapshot) Image() (draw.Image, error) {
	if err := checkSize(sn.Cols, sn.Rows); err != nil {
		return nil, err
	}
	if len(sn.Cells) != sn.Cols*sn.Rows {
		return nil, fmt.Errorf("snapshot holds %d cells, not %dx%d", len(sn.Cells), sn.Cols, sn.Rows)
	}
	gc, err := cache()
	if err != nil {
		return nil, err
	}
	// First pass: each cell's colours, and the distinct pairs in the order
	// they first appear, which keeps the palette (and so the bytes) the
	// same from one render to the next.
	looks := make([]look, len(sn.Cells))
	index := make(map[[2]color.RGBA]int)
	var pairs [][2]color.RGBA
	for row := 0; row < sn.Rows; row++ {
		line := sn.Cells[row*sn.Cols : (row+1)*sn.Cols]
		for col, c := range line {
			if c.Width == 0 {
				continue // painted with its left half
			}
			lk := sn.lookOf(c, sn.cursorAt(line, row, col))
			key := [2]color.RGBA{lk.fg, lk.bg}
			if !lk.ink {
				key[0] = lk.bg // a blank needs only its background
			}
			i, ok := index[key]
			if !ok {
				i = len(pairs)
				index[key] = i
				pairs = append(pairs, key)
			}
			lk.pair = i
			looks[row*sn.Cols+col] = lk
		}
	}
	pens := make([]pen, len(pairs))
	for i, p := range pairs {
		for k := range pens[i].rgb {
			pens[i].rgb[k] = mix(p[0], p[1], k)
		}
		pens[i].base = uint8(i * levels) // used only when paletted, so i < maxPalettedPairs
	}
	cv := canvas{}
	if len(pairs) <= maxPalettedPairs {
		pal := make(color.Palette, 0, len(pairs)*levels)
		for _, p := range pens {
			for _, c := range p.rgb {
				pal = append(pal, c)
			}
		}
		cv.pal = image.NewPaletted(sn.Bounds(), pal)
	} else {
		cv.rgba = image.NewRGBA(sn.Bounds())
	}
	for row := 0; row < sn.Rows; row++ {
		for col, c := range sn.Cells[row*sn.Cols : (row+1)*sn.Cols] {
			if c.Width == 0 {
				continue
			}
			lk := &looks[row*sn.Cols+col]
			sn.drawCell(&cv, gc, row, col, c, lk, &pens[lk.pair])
		}
	}
	if cv.pal != nil {
		return cv.pal, nil
	}
	return cv.rgba, nil
}

// maxPalettedPairs is how many colour pairs fit a 256-colour palette; a
// variable so that a test can draw the same screen both ways.
var maxPalettedPairs = 256 / levels

// look is how one cell is drawn: its colours once inverse, the cursor
// and faint are applied, and whether anything is drawn over the
// background.
type look struct {
	fg, bg color.RGBA
	ink    bool
	pair   int
}

func (sn *Snapshot) lookOf(c screen.Cell, cursor bool) look {
	fg, bg := rgba(c.FG), rgba(c.BG)
	if c.Attrs.Has(screen.AttrInverse) {
		fg, bg = bg, fg
	}
	if cursor {
		fg, bg = bg, fg
	}
	if c.Attrs.Has(screen.AttrFaint) {
		fg = blend(fg, bg)
	}
	ink := !c.Attrs.Has(screen.AttrHidden) &&
		(c.Text != "" && c.Text != " " || c.Attrs&(screen.AttrUnderline|screen.AttrStrike) != 0)
	return look{fg: fg, bg: bg, ink: ink}
}

// cursorAt reports whether the cursor is on the character at col: on
// its cell, or on the right half of the wide character starting there
// (where the cursor stands after some programs move onto it).
func (sn *Snapshot) cursorAt(line []screen.Cell, row, col int) bool {
	if !sn.CursorVisible || row != sn.CursorRow {
		return false
	}
	return col == sn.CursorCol || (line[col].Width == 2 && col+1 == sn.CursorCol)
}

func (sn *Snapshot) drawCell(cv *canvas, gc *glyphCache, row, col int, c screen.Cell, lk *look, p *pen) {
	r := image.Rect(col*CellWidth, row*CellHeight, (col+c.Width)*CellWidth, (row+1)*CellHeight)
	cv.fill(r, p, 0)
	if !lk.ink {
		return
	}
	if c.Text != "" && c.Text != " " {
		text := c.Text
		if len(text) > 1 {
			// A base and a combining mark the program sent apart (e and
			// U+0301) usually have a precomposed form the font holds.
			text = norm.NFC.String(text)
		}
		g := gc.get(glyphKey{text: text, style: styleOf(c.Attrs), width: c.Width})
		if g.missing {
			box(cv, r, p)
		} else {
			cv.mask(r, p, g.mask)
		}
	}
	if c.Attrs.Has(screen.AttrUnderline) {
		cv.fill(image.Rect(r.Min.X, r.Min.Y+ascent+1, r.Max.X, r.Min.Y+ascent+2), p, levels-1)
	}
	if c.Attrs.Has(screen.AttrStrike) {
		cv.fill(image.Rect(r.Min.X, r.Min.Y+ascent-5, r.Max.X, r.Min.Y+ascent-4), p, levels-1)
	}
}

func styleOf(a screen.Attr) style {
	s := styleRegular
	if a.Has(screen.AttrBold) {
		s |= styleBold
	}
	if a.Has(screen.AttrItalic) {
		s |= styleItalic
	}
	return s
}

// box outlines r, inset by one pixel so that boxes side by side stay apart.
func box(cv *canvas, r image.Rectangle, p *pen) {
	in := r.Inset(1)
	in.Min.Y += 2 // the top of a capital, not of the cell
	cv.fill(image.Rect(in.Min.X, in.Min.Y, in.Max.X, in.Min.Y+1), p, levels-1)
	cv.fill(image.Rect(in.Min.X, in.Max.Y-1, in.Max.X, in.Max.Y), p, levels-1)
	cv.fill(image.Rect(in.Min.X, in.Min.Y, in.Min.X+1, in.Max.Y), p, levels-1)
	cv.fill(image.Rect(in.Max.X-1, in.Min.Y, in.Max.X, in.Max.Y), p, levels-1)
}

func rgba(c screen.Color) color.RGBA { return color.RGBA{c.R, c.G, c.B, 0xff} }

// mix is the colour k/(levels-1) of the way from bg to fg: the edge of a
// glyph that covers that much of a pixel.
func mix(fg, bg color.RGBA, k int) color.RGBA {
	m := func(f, b uint8) uint8 {
		return uint8((int(f)*k + int(b)*(levels-1-k) + (levels-1)/2) / (levels - 1))
	}
	return color.RGBA{m(fg.R, bg.R), m(fg.G, bg.G), m(fg.B, bg.B), 0xff}
}

// blend is halfway between a and b: faint text, as xterm dims it.
func blend(a, b color.RGBA) color.RGBA {
	mid := func(x, y uint8) uint8 { return uint8((uint16(x) + uint16(y)) / 2) }
	return color.RGBA{mid(a.R, b.R), mid(a.G, b.G), mid(a.B, b.B), 0xff}
}

// Encode renders the snapshot as PNG bytes.
func (sn *Snapshot) Encode() ([]byte, error) {
	img, err := sn.Image()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	// Screens are mostly flat areas: the fastest level makes files at most
	// 16% larger than the default does, in about half its time
	// (BenchmarkRender, every case).
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// PNG renders the visible screen of s as PNG bytes.
func PNG(s *screen.Screen) ([]byte, error) {
	sn, err := Take(s)
	if err != nil {
		return nil, err
	}
	return sn.Encode()
}
