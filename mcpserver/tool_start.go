//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/shquote"
	"github.com/ptyplex/ptyplex/session/wire"
)

var startTool = toolDef{tool: mcp.Tool{
	Name:        "start",
	Description: "Start a program in a new pseudo-terminal (shell, REPL, editor, pager, TUI). For shell commands use {\"command\":[\"bash\"],\"shell_integration\":true}, then run. Returns the session handle. Not run through a shell; 80x24. Stopped with this connection unless persistent.",
}, nonEmpty: []string{"command"}}

// StartInput is the start tool's arguments.
type StartInput struct {
	Command    []string          `json:"command" jsonschema:"program and arguments"`
	Size       string            `json:"size,omitempty" jsonschema:"COLSxROWS (default 80x24)"`
	Scrollback *int              `json:"scrollback,omitempty" jsonschema:"lines kept (default 10000)"`
	Cwd        string            `json:"cwd,omitempty" jsonschema:"working directory"`
	Env        map[string]string `json:"env,omitempty" jsonschema:"extra environment"`
	Persistent bool              `json:"persistent,omitempty" jsonschema:"outlive this connection"`
	Plain      bool              `json:"plain,omitempty" jsonschema:"no colours"`
	Socket     string            `json:"socket,omitempty" jsonschema:"socket path"`
	// ShellIntegration is what makes the run tool work.
	ShellIntegration bool `json:"shell_integration,omitempty" jsonschema:"bash/zsh: report command ends, for run"`
}

// StartOutput describes the new session.
type StartOutput struct {
	Session    string   `json:"session" jsonschema:"handle to pass to the other tools"`
	Socket     string   `json:"socket" jsonschema:"socket path; also a valid handle, and usable with the ptyplex CLI"`
	PID        int      `json:"pid" jsonschema:"process id of the session daemon"`
	Command    []string `json:"command"`
	Persistent bool     `json:"persistent"`
}

func (s *Server) start(ctx context.Context, in StartInput) (string, StartOutput, error) {
	if len(in.Command) == 0 || in.Command[0] == "" {
		return "", StartOutput{}, fmt.Errorf("the command argument is required: e.g. {\"command\":[\"bash\",\"--norc\"]}")
	}
	if in.Size != "" {
		if _, _, err := wire.ParseSize(in.Size); err != nil {
			return "", StartOutput{}, err
		}
	}
	if in.Scrollback != nil && *in.Scrollback < 0 {
		return "", StartOutput{}, fmt.Errorf("invalid scrollback %d: must be 0 or more", *in.Scrollback)
	}
	if in.Cwd != "" && !filepath.IsAbs(in.Cwd) {
		abs, err := filepath.Abs(in.Cwd)
		if err != nil {
			return "", StartOutput{}, fmt.Errorf("cwd %q: %v", in.Cwd, err)
		}
		in.Cwd = abs
	}
	st, err := launch(ctx, s.binary, startSpec{
		Command: in.Command, Size: in.Size, Scrollback: in.Scrollback, Socket: in.Socket,
		Plain: in.Plain, Dir: in.Cwd, Env: in.Env, IdleExit: s.idleExit,
		ShellIntegration: in.ShellIntegration,
	})
	if err != nil {
		return "", StartOutput{}, err
	}
	d, err := holdDaemon(st.PID, st.Socket)
	if err != nil {
		// The session works without the hold; only a stuck daemon can
		// then not be signalled when it is stopped.
		s.log.Warn("the session's daemon cannot be signalled if it does not answer STOP", "socket", st.Socket, "err", err)
	}
	e, ok := s.reg.add(&entry{
		Socket: st.Socket, PID: st.PID, daemon: d, Command: in.Command,
		Persistent: in.Persistent, AutoSocket: st.Auto, Started: time.Now(),
	})
	if !ok {
		if in.Persistent {
			return "", StartOutput{}, fmt.Errorf("the client disconnected while %q was starting; the persistent session runs on at %s", strings.Join(in.Command, " "), e.Socket)
		}
		e.stop(context.WithoutCancel(ctx))
		return "", StartOutput{}, fmt.Errorf("the client disconnected while %q was starting; it was stopped", strings.Join(in.Command, " "))
	}
	out := StartOutput{Session: e.ID, Socket: e.Socket, PID: e.PID, Command: e.Command, Persistent: e.Persistent}
	life := "it is stopped when this MCP connection ends"
	if e.Persistent {
		life = "it is persistent: it keeps running after this connection ends, until stopped"
	}
	next := fmt.Sprintf("wait for the program to be ready, e.g. wait {\"session\":%q,\"input\":true}", e.ID)
	if in.ShellIntegration {
		// run waits for the first prompt itself.
		next = fmt.Sprintf("run shell commands, e.g. run {\"session\":%q,\"command\":\"ls\"}", e.ID)
	}
	text := fmt.Sprintf("Started session %s: %s\nSocket: %s\nPID: %d\nThe session runs until you call stop; %s.\nA human can watch it with: ptyplex output --socket %s\nNext: %s.",
		e.ID, shquote.Join(in.Command), e.Socket, e.PID, life, e.Socket, next)
	for _, w := range st.Warnings {
		s.log.Warn("start said", "session", e.ID, "line", w)
		text += "\nNote: " + w
	}
	return text, out, nil
}
