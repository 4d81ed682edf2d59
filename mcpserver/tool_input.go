package mcpserver

import (
	"context"
	"fmt"
	"github.com/ptyplex/ptyplex/internal/cescape"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var inputTool = toolDef{
	tool: mcp.Tool{
		Name:  "input",
		Title: "Type into a terminal",
		Description: `Send keystrokes to the program in a session, as if typed on its keyboard. text is sent first, then keys, in one write.

text: characters to type, with C-style escapes: \n (newline) \r (carriage return: what the Enter key sends) \t \b \a \v \f \e (Escape) \\ (a backslash) and \xHH (any byte, e.g. \x03 for Ctrl-C); an unknown escape such as \z is sent unchanged. Set literal to true to send text exactly as given. Remember the JSON layer: the two characters backslash-r are written "\\r" inside a JSON string.

keys: named keys, sent after text: Enter, Tab, ShiftTab, Escape (Esc), Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1..F12, Ctrl-A..Ctrl-Z (also Ctrl-C, Ctrl-D, Ctrl-[, Ctrl-\, Ctrl-]), Alt-<key> (sends Escape first). Add *N to repeat: "Down*3". Names are case-insensitive.

Input returns as soon as the bytes are written; it does not wait for the program to react. Follow it with wait (e.g. a regex for the next prompt, or quiet_ms) and then output, or use wait's returned screen.

Examples: {"session":"s1","text":"ls -l","keys":["Enter"]}; {"session":"s1","keys":["Ctrl-C"]}; {"session":"s1","text":"ihello\\e:wq\\r"} (vim: insert, Escape, save and quit); {"session":"s1","keys":["Down*2","Enter"]}.`,
	},
	enums: map[string][]any{"cursor_keys": {"auto", "normal", "application"}},
}

// InputInput is the input tool's arguments.
type InputInput struct {
	Session    string   `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
	Text       string   `json:"text,omitempty" jsonschema:"text to type, with C-style escapes (\\r is Enter, \\e is Escape, \\xHH any byte)"`
	Keys       []string `json:"keys,omitempty" jsonschema:"named keys sent after text, e.g. [\"Enter\"], [\"Ctrl-C\"], [\"Up\",\"Enter\"], [\"Down*3\"]"`
	Literal    bool     `json:"literal,omitempty" jsonschema:"send text exactly as given, without interpreting backslash escapes"`
	CursorKeys string   `json:"cursor_keys,omitempty" jsonschema:"how to encode Up/Down/Left/Right/Home/End: auto (default: follow the terminal's mode when the session reports it, else normal), normal (ESC [ A) or application (ESC O A)"`
}

// InputOutput reports what was sent.
type InputOutput struct {
	Session string `json:"session"`
	Bytes   int    `json:"bytes" jsonschema:"number of bytes written to the terminal"`
	Sent    string `json:"sent" jsonschema:"the bytes sent, Go-quoted (escapes visible)"`
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
		data = cescape.Unescape(in.Text)
	}
	if len(in.Keys) > 0 {
		app, err := s.appCursor(ctx, t.socket, in.CursorKeys)
		if err != nil {
			return "", InputOutput{}, err
		}
		kb, err := keyBytes(in.Keys, app)
		if err != nil {
			return "", InputOutput{}, err
		}
		data = append(data, kb...)
	}
	if _, err := call[struct{}](ctx, t.socket, map[string]any{"type": "INPUT", "data": string(data)}); err != nil {
		return "", InputOutput{}, err
	}
	out := InputOutput{Session: in.Session, Bytes: len(data), Sent: strconv.Quote(string(data))}
	return fmt.Sprintf("Sent %d bytes: %s", out.Bytes, out.Sent), out, nil
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
	for _, k := range []string{"app_cursor_keys", "application_cursor_keys", "app_cursor"} {
		if v, ok := st[k].(bool); ok {
			return v, nil
		}
	}
	return false, nil
}
