package shot

import (
	"image"
	"image/draw"
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
)

// TestPalettedAndRGBAAgree draws recorded screens as paletted images
// (the common case) and again as RGBA (what a screen of many colour
// pairs gets): every pixel must be the same.
func TestPalettedAndRGBAAgree(t *testing.T) {
	for _, name := range []string{"vim-syntax", "dialog-menu", "htop", "wide"} {
		t.Run(name, func(t *testing.T) {
			stream, err := os.ReadFile("../../testdata/screen/" + name + ".bin")
			if err != nil {
				t.Fatal(err)
			}
			s := screen.New(80, 24, screen.Options{})
			s.Write(stream)
			sn, err := Take(s)
			if err != nil {
				t.Fatal(err)
			}
			pal, err := sn.Image()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := pal.(*image.Paletted); !ok {
				t.Fatalf("%s rendered as %T, want a paletted image", name, pal)
			}
			saved := maxPalettedPairs
			maxPalettedPairs = 0
			full, err := sn.Image()
			maxPalettedPairs = saved
			if err != nil {
				t.Fatal(err)
			}
			rgba, ok := full.(*image.RGBA)
			if !ok {
				t.Fatalf("with no palette room: %T, want RGBA", full)
			}
			conv := image.NewRGBA(pal.Bounds())
			draw.Draw(conv, conv.Rect, pal, image.Point{}, draw.Src)
			for i := range conv.Pix {
				if conv.Pix[i] != rgba.Pix[i] {
					px := i / 4
					t.Fatalf("pixel (%d,%d) differs: paletted %v, RGBA %v", px%conv.Rect.Dx(), px/conv.Rect.Dx(),
						conv.Pix[i&^3:i&^3+4], rgba.Pix[i&^3:i&^3+4])
				}
			}
		})
	}
}
