package shot_test

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/screen/shot"
)

var update = flag.Bool("update", false, "rewrite testdata/shot/*.png from the current renderer")

const (
	streamDir = "../../testdata/screen"
	pngDir    = "../../testdata/shot"
)

// replay feeds a recorded stream into a screen of the size its text
// golden names.
func replay(t testing.TB, name string) *screen.Screen {
	t.Helper()
	stream, err := os.ReadFile(filepath.Join(streamDir, name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(streamDir, name+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	var cols, rows int
	if _, err := fmt.Sscanf(string(golden), "size %d %d\n", &cols, &rows); err != nil {
		t.Fatalf("%s.golden header: %v", name, err)
	}
	s := screen.New(cols, rows, screen.Options{})
	s.Write(stream)
	return s
}

// TestGoldenPNG renders every recorded stream and compares the image
// pixel for pixel with its reviewed PNG. Rendering twice must give the
// same bytes: the output is deterministic. The goldens were made on
// linux/amd64; the rasteriser's floating point may round glyph edges
// otherwise elsewhere (testdata/shot/README.md).
func TestGoldenPNG(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		// testdata/shot/README.md: the rasteriser works in floating point,
		// and another architecture may differ in glyph edge pixels.
		t.Skipf("the PNG goldens are promised on amd64 only (testdata/shot/README.md); this is %s", runtime.GOARCH)
	}
	bins, err := filepath.Glob(filepath.Join(streamDir, "*.bin"))
	if err != nil || len(bins) == 0 {
		t.Fatalf("no recorded streams in %s (%v)", streamDir, err)
	}
	for _, bin := range bins {
		name := strings.TrimSuffix(filepath.Base(bin), ".bin")
		t.Run(name, func(t *testing.T) {
			s := replay(t, name)
			got, err := shot.PNG(s)
			if err != nil {
				t.Fatal(err)
			}
			again, err := shot.PNG(s)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, again) {
				t.Error("two renders of the same screen gave different PNG bytes")
			}
			path := filepath.Join(pngDir, name+".png")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it, then look at it)", err)
			}
			if msg := comparePNG(want, got); msg != "" {
				fail := filepath.Join(t.TempDir(), name+".png")
				os.WriteFile(fail, got, 0o644)
				t.Errorf("%s: %s (rendered image kept at %s; rerun with -update after review)", path, msg, fail)
			}
		})
	}
}

// comparePNG decodes both images and describes how they differ, or
// returns "" when every pixel is equal. Comparing pixels rather than
// bytes keeps the test about the picture, not about the encoder.
func comparePNG(want, got []byte) string {
	wi, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		return fmt.Sprintf("decode golden: %v", err)
	}
	gi, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		return fmt.Sprintf("decode rendered image: %v", err)
	}
	if wi.Bounds() != gi.Bounds() {
		return fmt.Sprintf("size %v, want %v", gi.Bounds().Size(), wi.Bounds().Size())
	}
	n, first := 0, image.Point{-1, -1}
	b := wi.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			wr, wg, wb, wa := wi.At(x, y).RGBA()
			gr, gg, gb, ga := gi.At(x, y).RGBA()
			if wr != gr || wg != gg || wb != gb || wa != ga {
				if n == 0 {
					first = image.Pt(x, y)
				}
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d pixels differ, the first at (%d,%d), in the cell at row %d col %d (0-based)",
		n, first.X, first.Y, first.Y/shot.CellHeight, first.X/shot.CellWidth)
}
