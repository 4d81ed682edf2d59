package session

import (
	"fmt"

	"github.com/ptyplex/ptyplex/screen/shot"
)

// ScreenshotData answers OUTPUT with "format":"png" (a ptyplex addition):
// the visible screen rendered as a PNG image.
//
// The daemon renders, rather than sending the cells for each client to
// draw, because the image is smaller than the cells: a 200x50 screen is
// 10,000 cells, which as JSON (text, two colours, attributes) would be
// about 1 MB, while its PNG is 5-35 KB for the recorded programs in
// testdata/shot (1.3 MB in the worst case, BenchmarkRender's 200x50 with
// every cell in another colour). It also gives every
// client, in any language, the same picture without a font or a renderer
// of its own, and keeps the cell form out of the protocol, free to change.
type ScreenshotData struct {
	// PNG is the image; JSON carries it as standard base64.
	PNG           []byte `json:"png"`
	Width         int    `json:"width"`  // pixels
	Height        int    `json:"height"` // pixels
	Cursor        Cursor `json:"cursor"`
	CursorVisible bool   `json:"cursor_visible"`
	Size          Size   `json:"size"`
	// OutputGen is the output generation the image shows; present when
	// the request asked "with_gen".
	OutputGen *int64 `json:"output_gen,omitempty"`
}

// maxScreenshot is the largest PNG that fits a reply once base64 and the
// envelope have their share of MaxMessage.
const maxScreenshot = (MaxMessage - 4<<10) / 4 * 3

// outputPNG answers an OUTPUT request for "format":"png". The screen is
// copied under the state lock and rendered after it is released, so that
// the PTY reader is never held up by encoding (5-20 ms for a typical
// screen, up to several hundred for a 200x50 one in 256 colour pairs).
func (d *Daemon) outputPNG(f fields) (any, error) {
	for _, name := range []string{"from", "to"} {
		if f.has(name) {
			return nil, invalidf("field '%s' does not apply to format \"png\", which renders the visible screen", name)
		}
	}
	withGen, err := f.bool("with_gen")
	if err != nil {
		return nil, err
	}
	st := d.st
	st.mu.Lock()
	snap, err := shot.Take(st.scr)
	gen := st.gen
	st.mu.Unlock()
	if err != nil {
		return nil, requestError(fmt.Sprintf("Cannot render the screen: %v", err))
	}

	img, err := snap.Encode()
	if err != nil {
		return nil, requestError(fmt.Sprintf("Cannot render the screen: %v", err))
	}
	if len(img) > maxScreenshot {
		return nil, requestError(fmt.Sprintf("Cannot render the screen: the PNG is %d bytes, more than the %d a reply can carry in base64; resize the terminal smaller",
			len(img), maxScreenshot))
	}
	b := snap.Bounds()
	out := ScreenshotData{
		PNG: img, Width: b.Dx(), Height: b.Dy(),
		Cursor:        Cursor{Row: snap.CursorRow, Col: snap.CursorCol},
		CursorVisible: snap.CursorVisible,
		Size:          Size{Rows: snap.Rows, Cols: snap.Cols},
	}
	if withGen {
		out.OutputGen = &gen
	}
	return out, nil
}
