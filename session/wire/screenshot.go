//go:build unix

package wire

// ScreenshotData answers OUTPUT with "format":"png" (a ptyplex addition):
// the visible screen rendered as a PNG image.
//
// The daemon renders, rather than sending the cells for each client to
// draw, because the image is smaller than the cells: a 200x50 screen is
// 10,000 cells, which as JSON (text, two colours, attributes) would be
// about 1 MB, while its PNG is 5-35 KB for the recorded programs in
// testdata/shot (1.3 MB in the worst case, BenchmarkRender's 200x50 with
// every cell in another colour). It also gives every client, in any
// language, the same picture without a font or a renderer of its own, and
// keeps the cell form out of the protocol, free to change.
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
