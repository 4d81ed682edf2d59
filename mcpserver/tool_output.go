package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/session/wire"
)

var outputTool = toolDef{
	tool: mcp.Tool{
		Name:  "output",
		Title: "Read a terminal's screen",
		Description: `Read what the terminal shows now: the screen as text, exactly as a human would see it (wide characters, full-screen programs, the alternate screen of vim/less), the cursor position and the size. Optionally include scrollback (lines that scrolled off the top).

Line numbers: 1..rows are screen lines (1 = top); -1 is the scrollback line just above the screen, -N further back; 0 is the boundary. from/to select an inclusive range: {"from":-50} adds the last 50 scrollback lines before the screen; {"from_oldest":true} starts at the oldest kept line; {"to":0} returns scrollback only; {"from":5,"to":5} is line 5 alone.

format "plain" (default) is text only; "ansi" keeps colours and attributes as ANSI escape sequences (use it when colour carries meaning, e.g. red errors or a highlighted menu entry). number prefixes each line with its line number and a tab. Cursor row/col are 1-based.

This reads the screen once; to wait for something to appear use wait instead of calling output repeatedly.`,
	},
	enums: map[string][]any{"format": {"plain", "ansi"}},
}

// OutputInput is the output tool's arguments.
type OutputInput struct {
	Session    string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
	Format     string `json:"format,omitempty" jsonschema:"plain (default) or ansi (colours as escape sequences)"`
	From       *int   `json:"from,omitempty" jsonschema:"first line, inclusive: negative = scrollback (-1 nearest the screen), 1 = top of screen (default 1)"`
	To         *int   `json:"to,omitempty" jsonschema:"last line, inclusive (default: last screen line; 0 = scrollback only)"`
	FromOldest bool   `json:"from_oldest,omitempty" jsonschema:"start at the oldest scrollback line (overrides from)"`
	Number     bool   `json:"number,omitempty" jsonschema:"prefix each line with its line number and a tab"`
}

// Position is a 1-based screen position.
type Position struct {
	Row int `json:"row"`
	Col int `json:"col"`
}

// TermSize is a terminal size.
type TermSize struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// OutputOutput is the screen.
type OutputOutput struct {
	Session             string   `json:"session"`
	Screen              string   `json:"screen" jsonschema:"the requested lines, newline-terminated"`
	Cursor              Position `json:"cursor" jsonschema:"cursor position, 1-based"`
	Size                TermSize `json:"size"`
	From                *int     `json:"from,omitempty" jsonschema:"first line returned; absent when no line was"`
	To                  *int     `json:"to,omitempty" jsonschema:"last line returned; absent when no line was"`
	Lines               int      `json:"lines" jsonschema:"how many lines were returned"`
	ScrollbackAvailable int      `json:"scrollback_available"`
	ScrollbackCapacity  int      `json:"scrollback_capacity"`
}

func (s *Server) output(ctx context.Context, in OutputInput) (string, OutputOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", OutputOutput{}, err
	}
	req := map[string]any{"type": "OUTPUT", "format": "ascii"}
	switch in.Format {
	case "", "plain", "text", "ascii":
	case "ansi", "color", "colour":
		req["format"] = "ansi"
	default:
		return "", OutputOutput{}, fmt.Errorf("invalid format %q: expected plain or ansi", in.Format)
	}
	switch {
	case in.FromOldest:
		req["from"] = "-"
	case in.From != nil:
		req["from"] = *in.From
	}
	if in.To != nil {
		req["to"] = *in.To
	}
	d, err := call[wire.OutputData](ctx, t.socket, req)
	if err != nil {
		return "", OutputOutput{}, err
	}
	out := OutputOutput{
		Session: in.Session, Screen: d.Screen,
		Cursor:              Position{Row: d.Cursor.Row + 1, Col: d.Cursor.Col + 1},
		Size:                TermSize{Cols: d.Size.Cols, Rows: d.Size.Rows},
		Lines:               returnedLines(d.From, d.To),
		ScrollbackAvailable: d.ScrollbackAvailable, ScrollbackCapacity: d.ScrollbackCapacity,
	}
	// The daemon answers a range past what exists (from after the last
	// line, to before the oldest) with from > to; report no range then,
	// not one that was never returned.
	lines := fmt.Sprintf("no lines (the requested range is past what exists: scrollback -%d..-1, screen 1..%d)", d.ScrollbackAvailable, d.Size.Rows)
	if out.Lines > 0 {
		out.From, out.To = &d.From, &d.To
		lines = fmt.Sprintf("lines %d..%d", d.From, d.To)
	}
	if in.Number {
		out.Screen = numberLines(d.Screen, d.From, d.To)
	}
	text := fmt.Sprintf("Screen %dx%d, cursor at row %d, col %d, %s (scrollback %d/%d):\n%s",
		out.Size.Cols, out.Size.Rows, out.Cursor.Row, out.Cursor.Col, lines,
		out.ScrollbackAvailable, out.ScrollbackCapacity, out.Screen)
	return text, out, nil
}

// returnedLines counts the protocol line numbers from..to, which skip the
// boundary 0.
func returnedLines(from, to int) int {
	if from > to {
		return 0
	}
	n := to - from + 1
	if from < 0 && to > 0 {
		n--
	}
	return n
}

// numberLines prefixes each line with its protocol line number, as
// `ptyplex output --number` does: zero-padded to the width of the largest
// number, "-" for scrollback, a tab. The lines are from..to (skipping 0),
// not what splitting on newlines gives: daemons differ in whether the last
// line ends with one.
func numberLines(screen string, from, to int) string {
	lines := strings.Split(screen, "\n")
	width := max(len(strconv.Itoa(max(from, -from))), len(strconv.Itoa(max(to, -to))))
	var b strings.Builder
	i := 0
	for n := from; n <= to; n++ {
		if n == 0 {
			continue
		}
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		i++
		sign := " "
		if n < 0 {
			sign = "-"
		}
		fmt.Fprintf(&b, "%s%0*d\t%s\n", sign, width, max(n, -n), line)
	}
	return b.String()
}
