//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/session/wire"
)

var killTool = toolDef{tool: mcp.Tool{
	Name:        "kill",
	Title:       "Send a signal to the program",
	Description: `Send a Unix signal to the program in a session (not to the session itself, which keeps showing the final screen and exit code until stop). Default SIGTERM. Accepts names with or without SIG (SIGINT, INT, TERM, KILL, HUP, QUIT, USR1, USR2) or numbers ("9"). To interrupt a running command in a shell or REPL, sending the Ctrl-C key with input is usually better: it goes to the foreground job, as a human's Ctrl-C would. Use {"signal":"KILL"} for a program that ignores everything else.`,
}}

// KillInput is the kill tool's arguments.
type KillInput struct {
	Session string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
	Signal  string `json:"signal,omitempty" jsonschema:"signal name or number, e.g. SIGTERM (default), SIGINT, KILL, 9"`
}

// KillOutput reports the signal sent.
type KillOutput struct {
	Session    string `json:"session"`
	SignalSent string `json:"signal_sent"`
}

func (s *Server) kill(ctx context.Context, in KillInput) (string, KillOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", KillOutput{}, err
	}
	sig := in.Signal
	if sig == "" {
		sig = "SIGTERM"
	}
	// Checked here too, so the message names the valid choices.
	if _, _, err := signame.Parse(sig); err != nil {
		return "", KillOutput{}, fmt.Errorf("%v: expected a signal name such as SIGTERM, SIGINT, SIGKILL, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 (SIG optional) or a number 1..64", err)
	}
	d, err := call[wire.KillData](ctx, t.socket, map[string]any{"type": "KILL", "signal": sig})
	if err != nil {
		return "", KillOutput{}, err
	}
	return fmt.Sprintf("Sent %s. Use wait {\"exit\":true} to wait for the program to end.", d.SignalSent),
		KillOutput{Session: in.Session, SignalSent: d.SignalSent}, nil
}

var resizeTool = toolDef{tool: mcp.Tool{
	Name:        "resize",
	Title:       "Resize a terminal",
	Description: `Change a session's terminal size; the program gets SIGWINCH and usually redraws (wait with quiet_ms afterwards before reading the screen). Use it when output is cut off or wrapped, or a TUI needs more room. Example: {"session":"s1","size":"132x50"}.`,
}}

// ResizeInput is the resize tool's arguments.
type ResizeInput struct {
	Session string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
	Size    string `json:"size" jsonschema:"new size as COLSxROWS, e.g. 120x40"`
}

// ResizeOutput is the new size.
type ResizeOutput struct {
	Session string   `json:"session"`
	Size    TermSize `json:"size"`
}

func (s *Server) resize(ctx context.Context, in ResizeInput) (string, ResizeOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", ResizeOutput{}, err
	}
	cols, rows, err := wire.ParseSize(in.Size)
	if err != nil {
		return "", ResizeOutput{}, err
	}
	d, err := call[wire.ResizeData](ctx, t.socket, map[string]any{"type": "RESIZE", "cols": cols, "rows": rows})
	if err != nil {
		return "", ResizeOutput{}, err
	}
	return fmt.Sprintf("Terminal resized to %dx%d", d.Size.Cols, d.Size.Rows),
		ResizeOutput{Session: in.Session, Size: TermSize{Cols: d.Size.Cols, Rows: d.Size.Rows}}, nil
}

var stopTool = toolDef{tool: mcp.Tool{
	Name:        "stop",
	Title:       "End a session",
	Description: `End a session: the program is hung up / terminated if still running, the daemon exits, and the handle becomes invalid. Call it when you are done with a program, including persistent sessions you no longer need. Read the final screen with output first if you still need it.`,
}}

// StopOutput reports the end of a session.
type StopOutput struct {
	Session string `json:"session"`
	Stopped bool   `json:"stopped"`
}

func (s *Server) stop(ctx context.Context, in SessionInput) (string, StopOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", StopOutput{}, err
	}
	if t.entry != nil {
		err = t.entry.stop(ctx)
	} else {
		err = stopSession(ctx, t.socket, nil)
	}
	if err != nil {
		return "", StopOutput{}, err
	}
	if t.entry != nil {
		s.reg.remove(t.entry.ID)
	}
	return fmt.Sprintf("Session %s stopped.", in.Session), StopOutput{Session: in.Session, Stopped: true}, nil
}

var debugTool = toolDef{tool: mcp.Tool{
	Name:        "debug",
	Title:       "Terminal diagnostics",
	Description: `Diagnostics for when a program misbehaves in the terminal: the escape sequences the emulator did not understand (possible rendering gaps), and the terminal's termios mode: "cooked" (line-buffered, the shell/REPL kind; echo on or off shows whether typed text appears, e.g. off at a password prompt) or "raw" (each key goes straight to a full-screen program). clear empties the list of unhandled sequences after reading it.`,
}}

// DebugInput is the debug tool's arguments.
type DebugInput struct {
	Session string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
	Clear   bool   `json:"clear,omitempty" jsonschema:"clear the unhandled-sequence list after reading it"`
}

// DebugOutput is the daemon's DEBUG answer.
type DebugOutput struct {
	Session   string              `json:"session"`
	Unhandled []wire.UnhandledSeq `json:"unhandled"`
	Dropped   int                 `json:"dropped"`
	Termios   wire.TermiosInfo    `json:"termios"`
}

func (s *Server) debug(ctx context.Context, in DebugInput) (string, DebugOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", DebugOutput{}, err
	}
	d, err := call[wire.DebugData](ctx, t.socket, map[string]any{"type": "DEBUG", "data": map[string]any{"clear": in.Clear}})
	if err != nil {
		return "", DebugOutput{}, err
	}
	if d.Unhandled == nil {
		d.Unhandled = []wire.UnhandledSeq{}
	}
	if d.Termios.Flags == nil {
		d.Termios.Flags = []string{}
	}
	return strings.TrimSuffix(d.Text(), "\n"), DebugOutput{Session: in.Session, Unhandled: d.Unhandled, Dropped: d.Dropped, Termios: d.Termios}, nil
}
