package shot

import (
	"image"
	"image/color"
)

// levels is how many steps of coverage a glyph's edge pixels take, from
// the background (0) to the foreground (levels-1). Sixteen look as smooth
// as 256 at this size, and let a screen of up to 16 colour pairs fit a
// 256-colour palette.
const levels = 16

// pen is the colours of one foreground and background pair at every
// level, and where they start in a paletted image's palette.
type pen struct {
	rgb  [levels]color.RGBA
	base uint8
}

// canvas is the image being drawn, paletted or not; exactly one of the
// two is set. Drawing writes pixels directly: cells are small rectangles
// on one background each, where the general draw package costs several
// times as much.
type canvas struct {
	pal  *image.Paletted
	rgba *image.RGBA
}

// fill paints r at one level of p.
func (cv *canvas) fill(r image.Rectangle, p *pen, level int) {
	if cv.pal != nil {
		r = r.Intersect(cv.pal.Rect)
		v := p.base + uint8(level)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := cv.pal.Pix[cv.pal.PixOffset(r.Min.X, y):cv.pal.PixOffset(r.Max.X, y)]
			for i := range row {
				row[i] = v
			}
		}
		return
	}
	r = r.Intersect(cv.rgba.Rect)
	c := p.rgb[level]
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := cv.rgba.Pix[cv.rgba.PixOffset(r.Min.X, y):cv.rgba.PixOffset(r.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, 0xff
		}
	}
}

// mask paints the glyph m (levels per pixel, 0 for none) at r's origin.
func (cv *canvas) mask(r image.Rectangle, p *pen, m *image.Alpha) {
	w, h := min(r.Dx(), m.Rect.Dx()), min(r.Dy(), m.Rect.Dy())
	for y := 0; y < h; y++ {
		src := m.Pix[y*m.Stride : y*m.Stride+w]
		if cv.pal != nil {
			dst := cv.pal.Pix[cv.pal.PixOffset(r.Min.X, r.Min.Y+y):]
			for x, l := range src {
				if l != 0 {
					dst[x] = p.base + l
				}
			}
			continue
		}
		dst := cv.rgba.Pix[cv.rgba.PixOffset(r.Min.X, r.Min.Y+y):]
		for x, l := range src {
			if l != 0 {
				c := p.rgb[l]
				dst[4*x], dst[4*x+1], dst[4*x+2], dst[4*x+3] = c.R, c.G, c.B, 0xff
			}
		}
	}
}
