//go:build unix

package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shotResult mirrors the screenshot tool's structured result.
type shotResult struct {
	Width, Height, Bytes int
	Cursor               struct{ Row, Col int }
	CursorVisible        bool `json:"cursor_visible"`
	Size                 struct{ Cols, Rows int }
}

// TestScreenshotTool takes a screenshot of a coloured screen through the
// MCP server: the result holds the text, then MCP image content (a PNG
// whose known cells have the program's colours), and the structured
// result describes the image without carrying it.
func TestScreenshotTool(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"sh", "-c",
		`printf '\033[H\033[2J\033[44m   \033[0m\033[?25l\r\nready'; read x`}})
	c.until(s.Session, `ready`)

	res := c.call("screenshot", map[string]any{"session": s.Session})
	if res.IsError {
		t.Fatalf("screenshot: tool error: %s", text(res))
	}
	if len(res.Content) != 2 {
		t.Fatalf("screenshot: %d content items, want text and image", len(res.Content))
	}
	if !strings.Contains(text(res), "a 720x456 PNG") || !strings.Contains(text(res), "cursor hidden") {
		t.Errorf("screenshot text: %q", text(res))
	}
	im, ok := res.Content[1].(*mcp.ImageContent)
	if !ok {
		t.Fatalf("second content is %T, want image content", res.Content[1])
	}
	if im.MIMEType != "image/png" {
		t.Errorf("mimeType %q, want image/png", im.MIMEType)
	}
	img, err := png.Decode(bytes.NewReader(im.Data))
	if err != nil {
		t.Fatalf("image content is not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(720, 456) {
		t.Errorf("image size %v, want 720x456", got)
	}
	// SGR 44 is xterm's blue, 0000ee; cell (0,2) is the last blue one,
	// (0,3) and the cell after "ready" (where a visible cursor would be)
	// are the default black.
	at := func(row, col int) color.RGBA {
		r, g, b, _ := img.At(col*9+4, row*19+9).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
	}
	for _, p := range []struct {
		row, col int
		want     color.RGBA
	}{{0, 0, color.RGBA{0, 0, 0xee, 0xff}}, {0, 2, color.RGBA{0, 0, 0xee, 0xff}}, {0, 3, color.RGBA{0, 0, 0, 0xff}}, {1, 5, color.RGBA{0, 0, 0, 0xff}}} {
		if got := at(p.row, p.col); got != p.want {
			t.Errorf("cell %d,%d: colour %v, want %v", p.row, p.col, got, p.want)
		}
	}

	var out shotResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured result %s: %v", b, err)
	}
	if out.Width != 720 || out.Height != 456 || out.Bytes != len(im.Data) || out.CursorVisible || out.Size.Cols != 80 || out.Size.Rows != 24 {
		t.Errorf("structured result %+v (image %d bytes)", out, len(im.Data))
	}
	if bytes.Contains(b, []byte(`"png"`)) || len(b) > 1000 {
		t.Errorf("the structured result carries more than the description: %d bytes", len(b))
	}

	c.fails("screenshot", map[string]any{"session": "s99"}, `unknown session "s99"`)
}
