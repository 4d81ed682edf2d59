//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/internal/cescape"
	"github.com/ptyplex/ptyplex/internal/session/keys"
	"github.com/ptyplex/ptyplex/session/wire"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/session/waitcond"
)

var inputTool = toolDef{
	tool: mcp.Tool{
		Name:        "input",
		Description: "Type text (escapes \\r Enter, \\n, \\t, \\e Esc, \\xHH, \\\\), then keys (Enter Tab Esc Backspace Up Down Left Right Home End PageUp PageDown Delete F1..F12 Ctrl-A..Ctrl-Z Alt-X, \"Down*3\"). A wait (wait_input: it reacted and reads again, best after a command; wait_regex; wait_contains; wait_quiet_ms) sees only output after this input and returns the screen, or with since what changed.",
	},
	enums: map[string][]any{"cursor_keys": {"auto", "normal", "application"}},
}

// InputInput is the input tool's arguments.
type InputInput struct {
	Session    string   `json:"session" jsonschema:"session handle"`
	Text       string   `json:"text,omitempty" jsonschema:"text to type, with escapes"`
	Keys       []string `json:"keys,omitempty" jsonschema:"key names, after text"`
	Literal    bool     `json:"literal,omitempty" jsonschema:"text without escapes"`
	CursorKeys string   `json:"cursor_keys,omitempty" jsonschema:"arrow key encoding"`
	// The optional wait after the input (see waitAfterInput).
	WaitRegex     string `json:"wait_regex,omitempty" jsonschema:"then wait for this regex"`
	WaitContains  string `json:"wait_contains,omitempty" jsonschema:"then wait for this text"`
	WaitQuietMs   millis `json:"wait_quiet_ms,omitempty" jsonschema:"then wait for quiet ms"`
	WaitInput     bool   `json:"wait_input,omitempty" jsonschema:"then wait until it reads input"`
	TimeoutMs     millis `json:"timeout_ms,omitempty" jsonschema:"wait bound (default 10000)"`
	IncludeScreen *bool  `json:"include_screen,omitempty" jsonschema:"with the screen (default true)"`
	Since         string `json:"since,omitempty" jsonschema:"token: only what changed"`
}

// InputOutput reports what was sent, and how the wait after it ended.
type InputOutput struct {
	Session string `json:"session"`
	Bytes   int    `json:"bytes" jsonschema:"number of bytes written to the terminal"`
	Sent    string `json:"sent" jsonschema:"the bytes sent, Go-quoted (escapes visible)"`
	// Changes answers since: what changed, and the token for the next read.
	Changes *OutputOutput `json:"changes,omitempty" jsonschema:"with since: the rows that changed since that read, and a new token"`
	Wait    *WaitOutput   `json:"wait,omitempty" jsonschema:"with wait_regex, wait_contains or wait_quiet_ms: how the wait ended"`
}

func (s *Server) input(ctx context.Context, in InputInput) (string, InputOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", InputOutput{}, err
	}
	if in.Text == "" && len(in.Keys) == 0 {
		return "", InputOutput{}, fmt.Errorf("nothing to send: give text, keys, or both")
	}
	var data []byte
	if in.Literal {
		data = []byte(in.Text)
	} else {
		if data, err = cescape.Unescape(in.Text); err != nil {
			return "", InputOutput{}, fmt.Errorf("text: %w (write \\\\x for a literal backslash-x, or set literal)", err)
		}
	}
	if len(in.Keys) > 0 {
		app, err := s.appCursor(ctx, t.socket, in.CursorKeys)
		if err != nil {
			return "", InputOutput{}, err
		}
		kb, err := keys.Encode(in.Keys, app)
		if err != nil {
			return "", InputOutput{}, err
		}
		data = append(data, kb...)
	}
	spec, cond, waiting, err := parseInputWait(in)
	if err != nil {
		return "", InputOutput{}, err
	}
	if in.Since != "" && !waiting {
		return "", InputOutput{}, fmt.Errorf("since returns what changed after a wait: give wait_input, wait_regex, wait_contains or wait_quiet_ms too")
	}
	req := map[string]any{"type": "INPUT", "data": string(data)}
	if waiting {
		before, err := waitcond.Snapshot(ctx, t.socket, 0)
		if err != nil {
			return "", InputOutput{}, describe(t.socket, err)
		}
		spec.Before = &before
		req["with_gen"] = true
	}
	sent, err := call[wire.InputData](ctx, t.socket, req)
	if err != nil {
		return "", InputOutput{}, err
	}
	out := InputOutput{Session: in.Session, Bytes: len(data), Sent: strconv.Quote(string(data))}
	text := fmt.Sprintf("Sent %d bytes: %s", out.Bytes, out.Sent)
	if !waiting {
		return text, out, nil
	}
	spec.AfterGen = &sent.OutputGen
	note := ""
	if timeoutClamped(in.TimeoutMs) {
		note = clampNote()
	}
	withScreen := in.Since == "" && (in.IncludeScreen == nil || *in.IncludeScreen)
	w, wtext, err := waitAndReport(ctx, t.socket, spec, cond, note, withScreen)
	if err != nil {
		return "", InputOutput{}, err
	}
	w.Session = in.Session
	out.Wait = &w
	switch {
	case !withScreen && w.Met && !w.AlreadyMet && !w.Exited && note == "":
		// Without the screen (a since read, or include_screen false) the
		// reply is the compact form: the bytes were what the agent asked
		// for (the structured result has them), and what it wants to see
		// comes below or from its next read.
		text = fmt.Sprintf("After %d ms: %s.", w.ElapsedMs, strings.TrimSuffix(cond, " (in output after the input)"))
	default:
		text += "\n" + wtext
	}
	if in.Since != "" {
		ctext, changes, err := s.output(ctx, OutputInput{Session: in.Session, Since: in.Since})
		if err != nil {
			return "", InputOutput{}, fmt.Errorf("the input was sent and the wait ended, but reading the changes failed: %w", err)
		}
		out.Changes = &changes
		text += "\n" + ctext
	}
	return text, out, nil
}

// parseInputWait validates the wait after the input, if one was asked for.
func parseInputWait(in InputInput) (waitcond.Spec, string, bool, error) {
	n := 0
	for _, on := range []bool{in.WaitRegex != "", in.WaitContains != "", in.WaitQuietMs != 0, in.WaitInput} {
		if on {
			n++
		}
	}
	if n == 0 {
		if in.TimeoutMs != 0 {
			return waitcond.Spec{}, "", false, fmt.Errorf("timeout_ms bounds a wait: give wait_input, wait_regex, wait_contains or wait_quiet_ms too")
		}
		return waitcond.Spec{}, "", false, nil
	}
	if n > 1 {
		return waitcond.Spec{}, "", false, fmt.Errorf("choose one of wait_input, wait_regex, wait_contains and wait_quiet_ms")
	}
	spec, cond, err := parseWait(WaitInput{Regex: in.WaitRegex, Contains: in.WaitContains, QuietMs: in.WaitQuietMs, Input: in.WaitInput, TimeoutMs: in.TimeoutMs})
	if err != nil {
		return spec, "", false, err
	}
	return spec, cond + " (in output after the input)", true, nil
}

// appCursor decides the cursor-key encoding. In auto mode it asks STATUS
// for the application cursor-key mode (DECCKM), which our daemon reports
// as app_cursor_keys (present only when on). A daemon that does not report
// it gets normal mode, which shells, readline and most REPLs accept either
// way. The other names are those other daemons might use.
func (s *Server) appCursor(ctx context.Context, socket, mode string) (bool, error) {
	switch mode {
	case "normal":
		return false, nil
	case "application":
		return true, nil
	case "", "auto":
	default:
		return false, fmt.Errorf("invalid cursor_keys %q: expected auto, normal or application", mode)
	}
	st, err := call[map[string]any](ctx, socket, map[string]any{"type": "STATUS"})
	if err != nil {
		return false, err
	}
	v, _ := st["app_cursor_keys"].(bool) // omitted when false
	return v, nil
}
