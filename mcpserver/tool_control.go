//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/session/wire"
)

var killTool = toolDef{tool: mcp.Tool{
	Name:        "kill",
	Description: "Send a signal to a session's program (default SIGTERM). To interrupt a command, input keys [\"Ctrl-C\"] is usually better.",
}}

// KillInput is the kill tool's arguments.
type KillInput struct {
	Session string `json:"session" jsonschema:"session handle"`
	Signal  string `json:"signal,omitempty" jsonschema:"name or number"`
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
	name := in.Signal
	if name == "" {
		name = "SIGTERM"
	}
	// Any name the platform knows. A daemon's KILL takes the names of
	// interminai's seven signals only: any other goes as its number, and
	// the result names it.
	sig, canonical, err := signame.Parse(name)
	if err != nil {
		return "", KillOutput{}, fmt.Errorf("%v: expected a signal name, with or without SIG, in any case (TERM, INT, KILL, HUP, QUIT, CONT, STOP, TSTP, USR1, WINCH, ...), or a number 1..64", err)
	}
	wireSig := name
	if _, _, err := signame.ParseSession(name); err != nil {
		wireSig = strconv.Itoa(int(sig))
	}
	d, err := call[wire.KillData](ctx, t.socket, map[string]any{"type": "KILL", "signal": wireSig})
	if err != nil {
		return "", KillOutput{}, err
	}
	sent := d.SignalSent
	if wireSig != name {
		sent = canonical
	}
	return fmt.Sprintf("Sent %s. Use wait {\"exit\":true} to wait for the program to end.", sent),
		KillOutput{Session: in.Session, SignalSent: sent}, nil
}

var resizeTool = toolDef{tool: mcp.Tool{
	Name:        "resize",
	Description: "Change a session's terminal size; the program gets SIGWINCH and redraws (then wait quiet_ms).",
}}

// ResizeInput is the resize tool's arguments.
type ResizeInput struct {
	Session string `json:"session" jsonschema:"session handle"`
	Size    string `json:"size" jsonschema:"COLSxROWS"`
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
	Description: "End a session: the program is hung up and the handle is gone; read the final screen first if you need it.",
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
	Description: "Escape sequences the emulator did not handle, and the termios mode: cooked (line editing; echo off at a password prompt) or raw.",
}}

// DebugInput is the debug tool's arguments.
type DebugInput struct {
	Session string `json:"session" jsonschema:"session handle"`
	Clear   bool   `json:"clear,omitempty" jsonschema:"empty the list after reading"`
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
	var ti wire.TermiosInfo
	if d.Termios != nil {
		ti = *d.Termios
	}
	if ti.Flags == nil {
		ti.Flags = []string{}
	}
	return strings.TrimSuffix(d.Text(), "\n"), DebugOutput{Session: in.Session, Unhandled: d.Unhandled, Dropped: d.Dropped, Termios: ti}, nil
}
