//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/session/wire"
)

// Run defaults: a command may take longer than a wait, but many MCP clients
// give up on a call after a minute or so; a longer one is better polled
// with a second run or the commands' exit reported by wait.
const (
	defaultRunTimeout  = 30 * time.Second
	defaultRunMaxChars = 20000
)

var runTool = toolDef{tool: mcp.Tool{
	Name:        "run",
	Description: "Run one shell command line in a bash or zsh started with shell_integration; returns when it ends with exit_code, output (cut from the top to max_chars) and a token for since. After timeout_ms it keeps running (timed_out); the next run waits for it. For vim, less, REPLs, prompts: input and wait.",
}}

// RunInput is the run tool's arguments.
type RunInput struct {
	Session   string `json:"session" jsonschema:"session handle"`
	Command   string `json:"command" jsonschema:"one line"`
	TimeoutMs millis `json:"timeout_ms,omitempty" jsonschema:"default 30000, max 600000"`
	MaxChars  int    `json:"max_chars,omitempty" jsonschema:"default 20000"`
	KeepLines int    `json:"keep_lines,omitempty" jsonschema:"grow scrollback to N first"`
}

// RunOutput is how the command ended.
type RunOutput struct {
	Session     string `json:"session"`
	Command     string `json:"command"`
	ExitCode    *int   `json:"exit_code,omitempty" jsonschema:"the command's exit status (absent on a timeout)"`
	Output      string `json:"output" jsonschema:"the command's output alone, plain text"`
	TimedOut    bool   `json:"timed_out" jsonschema:"timeout_ms passed first; the command is still running"`
	DurationMS  int64  `json:"duration_ms"`
	OutputCut   int    `json:"output_cut,omitempty" jsonschema:"characters cut from the top of output by max_chars"`
	LinesLost   int    `json:"lines_lost,omitempty" jsonschema:"lines of output the scrollback no longer held"`
	ShellExited bool   `json:"shell_exited,omitempty" jsonschema:"the shell itself exited; exit_code is its status"`
	Token       string `json:"token,omitempty" jsonschema:"the screen when the command ended: pass as since to the next input or output to get only what changed after it"`
}

func (s *Server) run(ctx context.Context, in RunInput) (string, RunOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", RunOutput{}, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return "", RunOutput{}, fmt.Errorf("the command argument is required: e.g. {\"session\":%q,\"command\":\"ls -l\"}", in.Session)
	}
	if in.TimeoutMs < 0 || in.MaxChars < 0 {
		return "", RunOutput{}, fmt.Errorf("timeout_ms and max_chars must be positive")
	}
	if in.KeepLines < 0 || in.KeepLines > wire.MaxKeepLines {
		return "", RunOutput{}, fmt.Errorf("invalid keep_lines %d: expected 1..%d lines", in.KeepLines, wire.MaxKeepLines)
	}
	timeout := defaultRunTimeout
	if in.TimeoutMs > 0 {
		timeout = clampMs(in.TimeoutMs, maxWaitTimeout)
	}
	maxChars := defaultRunMaxChars
	if in.MaxChars > 0 {
		maxChars = in.MaxChars
	}
	req := map[string]any{
		"type": "RUN", "command": in.Command,
		"timeout_ms": timeout.Milliseconds(), "max_chars": maxChars,
	}
	if in.KeepLines > 0 {
		req["keep_lines"] = in.KeepLines
	}
	d, err := call[wire.RunData](ctx, t.socket, req)
	if err != nil {
		if errors.Is(err, wire.ErrNoShellIntegration) {
			// The daemon names the CLI's flag; here it is start's argument.
			err = fmt.Errorf("%w. With this server: start {\"command\":[\"bash\"],\"shell_integration\":true}", err)
		}
		return "", RunOutput{}, err
	}
	out := RunOutput{
		Session: in.Session, Command: in.Command, ExitCode: d.ExitCode, Output: d.Output,
		TimedOut: d.TimedOut, DurationMS: d.DurationMS, OutputCut: d.OutputCut,
		LinesLost: d.LinesLost, ShellExited: d.ShellExited,
	}
	tok := ""
	if !d.TimedOut && !d.ShellExited {
		// A token for the screen as the command left it, so that the next
		// input with since (a program started after this command) costs
		// only what changed. Without one it costs a whole screen.
		o, err := call[wire.OutputData](ctx, t.socket, map[string]any{"type": "OUTPUT", "format": "ascii", "changes": true})
		if err == nil && o.Token != "" {
			out.Token, tok = o.Token, ", token "+o.Token
		}
	}
	var b strings.Builder
	switch {
	case d.TimedOut && d.WaitingFor == "prompt":
		fmt.Fprintf(&b, "Timed out after %v: an earlier command is still running, so this one was not typed. Interrupt it with input {\"keys\":[\"C-c\"]} or run again to wait longer.", timeout)
	case d.TimedOut:
		fmt.Fprintf(&b, "Timed out after %v: the command is still running (it was left running; run waits for it before typing the next command). Output so far:", timeout)
	case d.ShellExited:
		fmt.Fprintf(&b, "The shell exited with code %s; start a new session to run more commands.", codeText(d.ExitCode))
	default:
		fmt.Fprintf(&b, "Exit code %s after %d ms%s.", codeText(d.ExitCode), d.DurationMS, tok)
	}
	if d.OutputCut > 0 {
		fmt.Fprintf(&b, " The first %d characters of the output were cut (max_chars %d); rerun with a filter such as | tail or | grep, or a larger max_chars.", d.OutputCut, maxChars)
	}
	switch {
	case d.LinesLost > 0 && d.ScrollbackCleared:
		// Erased by the command itself: keep_lines cannot keep them.
		fmt.Fprintf(&b, " The first %d lines of output were erased: the command cleared the scrollback (as clear does).", d.LinesLost)
	case d.LinesLost > 0:
		fmt.Fprintf(&b, " The first %d lines of output had already left the scrollback; to keep them, run again with keep_lines.", d.LinesLost)
	}
	if d.Output == "" && !d.TimedOut {
		b.WriteString(" No output.")
	} else if d.Output != "" {
		if !d.TimedOut {
			b.WriteString(" Output:")
		}
		b.WriteString("\n")
		b.WriteString(termfilter.EscapeBidi(d.Output))
	}
	return b.String(), out, nil
}
