package shot

import (
	"fmt"
	"image"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The cell geometry. Go Mono at 15 points and 72 dpi, fully hinted, has an
// advance of exactly 9 pixels, an ascent of 15 and a descent of 4, so a
// 9x19 cell holds every glyph without clipping and box-drawing characters
// meet their neighbours above and below.
const (
	CellWidth  = 9
	CellHeight = 19
	fontSize   = 15
	ascent     = 15
)

// style picks one of the four Go Mono faces.
type style uint8

const (
	styleRegular style = iota
	styleBold
	styleItalic
	styleBoldItalic
)

// glyphKey names one rasterised cell: its text in one face, and how many
// cells wide it is drawn (a wide character's mask spans two).
type glyphKey struct {
	text  string
	style style
	width int
}

// glyph is a rasterised cell: the coverage of each pixel in levels
// (0..levels-1, not 0..255), or missing when the font has no glyph for the character's base
// (the caller draws a box instead).
type glyph struct {
	mask    *image.Alpha
	missing bool
}

// maxCached bounds the glyph cache. A screen rarely holds more than a few
// hundred distinct characters; a program printing every code point would
// otherwise grow the cache without end. Dropping the whole cache when
// it is full keeps the output identical, only slower for one render.
const maxCached = 4096

// glyphCache rasterises glyphs once and keeps them. Faces from opentype
// keep scratch buffers and are not safe for concurrent use, so every
// lookup holds mu; a render is one goroutine, and renders of different
// sessions in one process are rare enough that they may queue.
type glyphCache struct {
	mu     sync.Mutex
	fonts  [4]*sfnt.Font
	faces  [4]font.Face
	buf    sfnt.Buffer
	glyphs map[glyphKey]glyph
}

var cache = sync.OnceValues(newGlyphCache)

func newGlyphCache() (*glyphCache, error) {
	c := &glyphCache{glyphs: make(map[glyphKey]glyph)}
	for i, ttf := range [4][]byte{gomono.TTF, gomonobold.TTF, gomonoitalic.TTF, gomonobolditalic.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return nil, fmt.Errorf("parse Go Mono face %d: %w", i, err)
		}
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: fontSize, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return nil, fmt.Errorf("open Go Mono face %d: %w", i, err)
		}
		c.fonts[i], c.faces[i] = f, face
	}
	return c, nil
}

// get returns the glyph for k, rasterising it on first use.
func (c *glyphCache) get(k glyphKey) glyph {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.glyphs[k]; ok {
		return g
	}
	g := c.rasterise(k)
	if len(c.glyphs) >= maxCached {
		clear(c.glyphs)
	}
	c.glyphs[k] = g
	return g
}

// rasterise draws every rune of k.text at the cell's origin: the base
// character, then the combining marks over it (their advance is zero in
// the font, and a cell has one position anyway). Marks the font lacks are
// left out; a base it lacks makes the glyph missing.
func (c *glyphCache) rasterise(k glyphKey) glyph {
	f := c.fonts[k.style]
	mask := image.NewAlpha(image.Rect(0, 0, k.width*CellWidth, CellHeight))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: c.faces[k.style]}
	for i, r := range []rune(k.text) {
		idx, err := f.GlyphIndex(&c.buf, r)
		if err != nil || idx == 0 {
			if i == 0 {
				return glyph{missing: true}
			}
			continue
		}
		d.Dot = fixed.P(0, ascent)
		d.DrawString(string(r))
	}
	// Coverage becomes levels (see canvas.go), rounded to the nearest.
	for i, a := range mask.Pix {
		mask.Pix[i] = uint8((int(a)*(levels-1) + 127) / 255)
	}
	return glyph{mask: mask}
}
