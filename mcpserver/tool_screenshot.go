//go:build unix

package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/session/wire"
)

var screenshotTool = toolDef{
	tool: mcp.Tool{
		Name:  "screenshot",
		Title: "See a terminal's screen as an image",
		Description: `Return a PNG image of what the terminal shows now, as a person would see it in a terminal window: colours (16, 256 and true colour), bold, underline, inverse (the highlighted bar of a menu), wide characters and the cursor (a block). Use it when the look carries meaning that text loses: which menu entry is selected, what is highlighted or red, how a TUI is laid out, or to attach to a bug report. To read the text, use output: it is cheaper and exact.

The image is of the visible screen only (no scrollback), 9x19 pixels a cell in Go Mono (720x456 for 80x24). Characters the font lacks (CJK, emoji and most symbols) are drawn as outlined boxes of their width.`,
	},
}

// ScreenshotInput is the screenshot tool's arguments.
type ScreenshotInput struct {
	Session string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
}

// ScreenshotOutput describes the image, which goes back as MCP image
// content beside it rather than inside it: structured output is JSON an
// agent reads as text, and a base64 PNG there would cost a model tens of
// thousands of tokens for nothing.
type ScreenshotOutput struct {
	Session       string   `json:"session"`
	Width         int      `json:"width" jsonschema:"image width in pixels"`
	Height        int      `json:"height" jsonschema:"image height in pixels"`
	Bytes         int      `json:"bytes" jsonschema:"PNG size in bytes"`
	Cursor        Position `json:"cursor" jsonschema:"cursor position, 1-based"`
	CursorVisible bool     `json:"cursor_visible"`
	Size          TermSize `json:"size"`

	png []byte
}

// content is the image, added to the tool result after the text.
func (o ScreenshotOutput) content() []mcp.Content {
	return []mcp.Content{&mcp.ImageContent{Data: o.png, MIMEType: "image/png"}}
}

func (s *Server) screenshot(ctx context.Context, in ScreenshotInput) (string, ScreenshotOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", ScreenshotOutput{}, err
	}
	d, err := call[wire.ScreenshotData](ctx, t.socket, map[string]any{"type": "OUTPUT", "format": "png"})
	if err != nil {
		return "", ScreenshotOutput{}, err
	}
	if len(d.PNG) == 0 {
		return "", ScreenshotOutput{}, fmt.Errorf("session %s: the daemon answered without an image (an older daemon that does not render screenshots?)", in.Session)
	}
	out := ScreenshotOutput{
		Session: in.Session, Width: d.Width, Height: d.Height, Bytes: len(d.PNG),
		Cursor:        Position{Row: d.Cursor.Row + 1, Col: d.Cursor.Col + 1},
		CursorVisible: d.CursorVisible,
		Size:          TermSize{Cols: d.Size.Cols, Rows: d.Size.Rows},
		png:           d.PNG,
	}
	cursor := "hidden"
	if out.CursorVisible {
		cursor = fmt.Sprintf("at row %d, col %d", out.Cursor.Row, out.Cursor.Col)
	}
	text := fmt.Sprintf("Screenshot of the %dx%d screen: a %dx%d PNG (%d bytes), cursor %s.",
		out.Size.Cols, out.Size.Rows, out.Width, out.Height, out.Bytes, cursor)
	return text, out, nil
}
