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
		Name:        "screenshot",
		Description: "A PNG of the visible screen (colours, inverse, cursor), when the look matters: the selected menu entry, a TUI's layout. For text, output is cheaper.",
	},
}

// ScreenshotInput is the screenshot tool's arguments.
type ScreenshotInput struct {
	Session string `json:"session" jsonschema:"session handle"`
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
