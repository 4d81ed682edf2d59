package shot_test

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/shot"
)

var (
	black = color.RGBA{0, 0, 0, 0xff}
	white = color.RGBA{0xff, 0xff, 0xff, 0xff}
	red   = color.RGBA{0xcd, 0, 0, 0xff}
	green = color.RGBA{0, 0xcd, 0, 0xff}
)

func render(t *testing.T, cols, rows int, in string) *image.RGBA {
	t.Helper()
	s := screen.New(cols, rows, screen.Options{})
	s.Write([]byte(in))
	sn, err := shot.Take(s)
	if err != nil {
		t.Fatal(err)
	}
	img, err := sn.Image()
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(img.Bounds())
	draw.Draw(out, out.Rect, img, image.Point{}, draw.Src)
	return out
}

// cellRect is the pixel rectangle of the cell at row, col.
func cellRect(row, col int) image.Rectangle {
	return image.Rect(col*shot.CellWidth, row*shot.CellHeight, (col+1)*shot.CellWidth, (row+1)*shot.CellHeight)
}

// colours counts the colours of the pixels in r.
func colours(img *image.RGBA, r image.Rectangle) map[color.RGBA]int {
	m := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			m[img.RGBAAt(x, y)]++
		}
	}
	return m
}

// only checks that every pixel of r is c.
func only(t *testing.T, img *image.RGBA, r image.Rectangle, c color.RGBA, what string) {
	t.Helper()
	if got := colours(img, r); len(got) != 1 || got[c] == 0 {
		t.Errorf("%s: colours %v, want only %v", what, got, c)
	}
}

// has checks that r holds some pixels of exactly c (a glyph's solid
// strokes) besides others.
func has(t *testing.T, img *image.RGBA, r image.Rectangle, c color.RGBA, what string) {
	t.Helper()
	if colours(img, r)[c] == 0 {
		t.Errorf("%s: no pixel of %v in %v (colours %v)", what, c, r, colours(img, r))
	}
}

func TestImageSize(t *testing.T) {
	img := render(t, 80, 24, "")
	if got := img.Bounds().Size(); got != image.Pt(80*shot.CellWidth, 24*shot.CellHeight) {
		t.Errorf("size %v", got)
	}
}

// The corner pixel of a cell lies outside every glyph: it shows the
// background the cell is drawn with.
func corner(img *image.RGBA, row, col int) color.RGBA {
	return img.RGBAAt(col*shot.CellWidth, row*shot.CellHeight)
}

func TestColoursAndInverse(t *testing.T) {
	img := render(t, 6, 2, "\x1b[?25l\x1b[31;42mA\x1b[7mB\x1b[0m\x1b[7m \x1b[0m")
	if got := corner(img, 0, 0); got != green {
		t.Errorf("SGR 42 background: %v, want %v", got, green)
	}
	has(t, img, cellRect(0, 0), red, "SGR 31 glyph")
	if got := corner(img, 0, 1); got != red {
		t.Errorf("inverse background: %v, want the foreground %v", got, red)
	}
	has(t, img, cellRect(0, 1), green, "inverse glyph in the background colour")
	only(t, img, cellRect(0, 2), white, "an inverse blank of default colours")
	only(t, img, cellRect(0, 3), black, "a default blank")
}

func TestCursorIsInverseBlock(t *testing.T) {
	// The cursor ends on the cell after the inverse blank.
	img := render(t, 6, 2, "\x1b[7m \x1b[0m")
	only(t, img, cellRect(0, 0), white, "inverse blank")
	only(t, img, cellRect(0, 1), white, "cursor on a default blank")
	// Over an inverse cell the cursor swaps the colours back.
	img = render(t, 6, 2, "\x1b[7m \x1b[0m\x1b[1;1H")
	only(t, img, cellRect(0, 0), black, "cursor on an inverse blank")
	// Hidden (DECTCEM off): no block.
	img = render(t, 6, 2, "\x1b[?25l")
	only(t, img, cellRect(0, 0), black, "hidden cursor")
}

func TestHiddenFaintUnderlineStrike(t *testing.T) {
	img := render(t, 8, 2, "\x1b[?25l\x1b[8mX\x1b[0m\x1b[2mX\x1b[0m\x1b[4m \x1b[0m\x1b[9m \x1b[0mX")
	only(t, img, cellRect(0, 0), black, "hidden text")
	has(t, img, cellRect(0, 1), color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, "faint text, halfway to the background")
	if colours(img, cellRect(0, 1))[white] != 0 {
		t.Error("faint text has pixels of full brightness")
	}
	for _, c := range []struct {
		col  int
		line int // the row of the cell that is drawn
		what string
	}{{2, 16, "underline"}, {3, 10, "strikethrough"}} {
		r := cellRect(0, c.col)
		line := image.Rect(r.Min.X, r.Min.Y+c.line, r.Max.X, r.Min.Y+c.line+1)
		only(t, img, line, white, c.what+" line")
		if n := colours(img, r)[white]; n != shot.CellWidth {
			t.Errorf("%s: %d white pixels in the cell, want one line of %d", c.what, n, shot.CellWidth)
		}
	}
}

func TestBoldUsesBoldFace(t *testing.T) {
	img := render(t, 4, 1, "\x1b[?25lX\x1b[1mX")
	regular, bold := colours(img, cellRect(0, 0)), colours(img, cellRect(0, 1))
	if bold[white] <= regular[white] {
		t.Errorf("bold X has %d solid pixels, regular %d: not heavier", bold[white], regular[white])
	}
}

func TestWideAndMissingGlyphs(t *testing.T) {
	// 中 is two cells wide and not in Go Mono: an outlined box spanning
	// both cells, its inside the background.
	img := render(t, 6, 1, "\x1b[?25l\u4e2d")
	box := image.Rect(1, 3, 2*shot.CellWidth-1, shot.CellHeight-1)
	only(t, img, image.Rect(box.Min.X, box.Min.Y, box.Max.X, box.Min.Y+1), white, "top edge of the box")
	only(t, img, image.Rect(box.Min.X, box.Max.Y-1, box.Max.X, box.Max.Y), white, "bottom edge")
	only(t, img, image.Rect(box.Min.X, box.Min.Y, box.Min.X+1, box.Max.Y), white, "left edge")
	only(t, img, image.Rect(box.Max.X-1, box.Min.Y, box.Max.X, box.Max.Y), white, "right edge, in the second cell")
	only(t, img, box.Inset(1), black, "inside the box")
	only(t, img, cellRect(0, 2), black, "the cell after the wide character")

	// The cursor on the right half of a wide character covers all of it.
	img = render(t, 6, 1, "\u4e2d\x1b[1;2H")
	if a, b := corner(img, 0, 0), corner(img, 0, 1); a != white || b != white {
		t.Errorf("cursor on the right half: corners %v %v, want both white", a, b)
	}

	// A combining mark the font lacks still shows: e + U+0301 is drawn
	// as its precomposed form.
	a := render(t, 2, 1, "\x1b[?25le\u0301")
	b := render(t, 2, 1, "\x1b[?25l\u00e9")
	if !bytes.Equal(a.Pix, b.Pix) {
		t.Error("e + combining acute is not drawn as \u00e9")
	}
}

func TestTooLarge(t *testing.T) {
	s := screen.New(1000, 500, screen.Options{})
	_, err := shot.PNG(s)
	if err == nil || !strings.Contains(err.Error(), "a 1000x500 screen renders to 9000x9500 pixels") ||
		!strings.Contains(err.Error(), "resize the terminal smaller") {
		t.Fatalf("error %v, want one saying the screen is too large", err)
	}
	// The size the limit is documented to allow renders.
	s = screen.New(240, 200, screen.Options{})
	if _, err := shot.PNG(s); err != nil {
		t.Fatalf("240x200: %v", err)
	}
}

// Renders from several goroutines share the glyph cache; they must give
// identical images (and the race detector must stay quiet).
func TestConcurrentRenders(t *testing.T) {
	s := replay(t, "vim-syntax")
	want, err := shot.PNG(s)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := shot.Take(s)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([][]byte, 4)
	for i := range got {
		wg.Go(func() {
			b, err := snap.Encode()
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	for i, b := range got {
		if !bytes.Equal(b, want) {
			t.Errorf("render %d differs", i)
		}
	}
	if _, err := png.Decode(bytes.NewReader(want)); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
}
