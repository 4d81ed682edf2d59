//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/session/changetext"
	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/session/wire"
)

var outputTool = toolDef{
	tool: mcp.Tool{
		Name:        "output",
		Description: "Read the screen as text, the cursor and size. Lines 1..rows are the screen, -N the scrollback N lines up; from/to pick a range (to 0: scrollback only). Pass a result's token as since for only what changed (\"N: text\", \"scrolled N\": shift your copy up first, \"unchanged\"). max_chars cuts whole lines farthest from the cursor (the top on a shell).",
	},
	enums: map[string][]any{"format": {"plain", "ansi"}},
}

// OutputInput is the output tool's arguments.
type OutputInput struct {
	Session    string `json:"session" jsonschema:"session handle"`
	Format     string `json:"format,omitempty" jsonschema:"plain (default) or ansi"`
	From       *int   `json:"from,omitempty" jsonschema:"first line"`
	To         *int   `json:"to,omitempty" jsonschema:"last line"`
	FromOldest bool   `json:"from_oldest,omitempty" jsonschema:"from the oldest line"`
	Number     bool   `json:"number,omitempty" jsonschema:"number the lines"`
	Since      string `json:"since,omitempty" jsonschema:"token: only what changed"`
	MaxChars   *int   `json:"max_chars,omitempty" jsonschema:"most characters of lines"`
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
	Token               string   `json:"token,omitempty" jsonschema:"pass as since to the next read to get only what changed"`
	// The rest answer a read with since.
	Since             string       `json:"since,omitempty" jsonschema:"the token this read was compared with"`
	Changed           []LineChange `json:"changed,omitempty" jsonschema:"lines that changed: new scrollback lines, then screen rows, top to bottom"`
	Unchanged         bool         `json:"unchanged,omitempty" jsonschema:"nothing changed, not even the cursor"`
	Scrolled          int          `json:"scrolled,omitempty" jsonschema:"lines that scrolled off the top: shift your copy up as many rows"`
	ScrollbackLost    int          `json:"scrollback_lost,omitempty" jsonschema:"of those, how many the scrollback no longer holds"`
	ScrollbackCleared bool         `json:"scrollback_cleared,omitempty"`
	Redraw            string       `json:"redraw,omitempty" jsonschema:"resize, format or screen: every row is in changed"`
	Cut               *wire.Cut    `json:"cut,omitempty" jsonschema:"what max_chars left out: lines, chars, and the from/to that reads them"`
	CutBelow          *wire.Cut    `json:"cut_below,omitempty" jsonschema:"what max_chars left out under the lines returned (the rows farthest below the cursor)"`
}

// LineChange is one line of a since read.
type LineChange struct {
	Line int    `json:"line" jsonschema:"line number: 1..rows on the screen, negative in the scrollback"`
	Text string `json:"text"`
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
	req["changes"] = true // every result carries a token for the next since
	if in.Since != "" {
		req["since"] = in.Since
	}
	if in.MaxChars != nil {
		if *in.MaxChars < 1 {
			return "", OutputOutput{}, fmt.Errorf("invalid max_chars %d: expected a positive number of characters", *in.MaxChars)
		}
		req["max_chars"] = *in.MaxChars
	}
	d, err := call[wire.OutputData](ctx, t.socket, req)
	if err != nil {
		return "", OutputOutput{}, err
	}
	if in.Since != "" {
		if d.Since == "" {
			// Its answer is a whole screen, which must not pass for "only
			// this changed".
			return "", OutputOutput{}, fmt.Errorf("session %s: the daemon does not support since (changes reads); read without since", t.socket)
		}
		return s.changesResult(in, d)
	}
	if in.MaxChars != nil {
		changetext.EnforceBudget(&d, *in.MaxChars) // for a daemon that ignored max_chars
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
	held := fmt.Sprintf("scrollback -%d..-1, screen 1..%d", d.ScrollbackAvailable, d.Size.Rows)
	if d.ScrollbackAvailable == 0 {
		held = fmt.Sprintf("no scrollback, screen 1..%d", d.Size.Rows)
	}
	lines := fmt.Sprintf("no lines (the requested range is past what exists: %s)", held)
	if from, to, ok := reversedRange(in); ok {
		lines = fmt.Sprintf("no lines (the requested range is empty: from %d comes after to %d)", from, to)
	}
	if out.Lines > 0 {
		out.From, out.To = &d.From, &d.To
		lines = fmt.Sprintf("lines %d..%d", d.From, d.To)
	}
	if in.Number {
		out.Screen = numberLines(d.Screen, d.From, d.To)
	}
	tok := ""
	if d.Token != "" {
		out.Token = d.Token
		tok = ", token " + d.Token
	}
	cut, below := "", ""
	if d.Cut != nil {
		out.Cut = d.Cut
		cut = changetext.CutNote(*d.Cut, hints(in), false) + "\n"
	}
	if d.CutBelow != nil {
		out.CutBelow = d.CutBelow
		below = changetext.CutBelowNote(*d.CutBelow, hints(in), false) + "\n"
	}
	text := fmt.Sprintf("Screen %dx%d, cursor at row %d, col %d, %s (scrollback %d/%d)%s:\n%s%s%s",
		out.Size.Cols, out.Size.Rows, out.Cursor.Row, out.Cursor.Col, lines,
		out.ScrollbackAvailable, out.ScrollbackCapacity, tok, cut, termfilter.EscapeBidi(out.Screen), below)
	return text, out, nil
}

// reversedRange reports a requested range whose start comes after its end
// in the protocol's numbering (..., -2, -1, then 1, 2, ...; a from of 0
// is the first screen line, a to of 0 the last scrollback line), which
// selects nothing whatever the session holds.
func reversedRange(in OutputInput) (from, to int, ok bool) {
	if in.To == nil || in.FromOldest {
		return 0, 0, false
	}
	from, to = 1, *in.To
	if in.From != nil {
		from = *in.From
	}
	first, last := from, to
	if first == 0 {
		first = 1
	}
	if last == 0 {
		last = -1
	}
	return from, to, first > last
}

// changesResult answers a read with since: the compact form as text, the
// lines as structure.
func (s *Server) changesResult(in OutputInput, d wire.OutputData) (string, OutputOutput, error) {
	out := OutputOutput{
		Session: in.Session,
		Cursor:  Position{Row: d.Cursor.Row + 1, Col: d.Cursor.Col + 1},
		Size:    TermSize{Cols: d.Size.Cols, Rows: d.Size.Rows},
		Lines:   len(d.Changed), ScrollbackAvailable: d.ScrollbackAvailable, ScrollbackCapacity: d.ScrollbackCapacity,
		Token: d.Token, Since: d.Since, Unchanged: d.Unchanged, Scrolled: d.Scrolled,
		ScrollbackLost: d.ScrollbackLost, ScrollbackCleared: d.ScrollbackCleared, Redraw: d.Redraw, Cut: d.Cut, CutBelow: d.CutBelow,
	}
	for _, l := range d.Changed {
		out.Changed = append(out.Changed, LineChange{Line: l.N, Text: l.Text})
	}
	return termfilter.EscapeBidi(changetext.Render(d, hints(in))), out, nil
}

// hints name the tool's own arguments in what a cut says.
func hints(in OutputInput) changetext.Hints {
	b := 0
	if in.MaxChars != nil {
		b = *in.MaxChars
	}
	return changetext.Hints{
		Range:  func(a, z int) string { return fmt.Sprintf(`{"from":%d,"to":%d}`, a, z) },
		Budget: fmt.Sprintf("max_chars %d", b),
		Next:   "the next read with since",
	}
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
