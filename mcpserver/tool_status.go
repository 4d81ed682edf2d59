//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/shquote"
	"github.com/ptyplex/ptyplex/session/wire"
)

var statusTool = toolDef{tool: mcp.Tool{
	Name:        "status",
	Description: "Whether the program runs, its exit code, size, scrollback, and whether it waits for input.",
}}

// SessionInput names one session.
type SessionInput struct {
	Session string `json:"session" jsonschema:"session handle"`
}

// StatusOutput is a session's state.
type StatusOutput struct {
	Session             string   `json:"session"`
	Socket              string   `json:"socket"`
	Running             bool     `json:"running" jsonschema:"the program is still running"`
	ExitCode            *int     `json:"exit_code,omitempty" jsonschema:"the program's exit code, once it has exited (128+N for signal N)"`
	Size                TermSize `json:"size"`
	ScrollbackAvailable int      `json:"scrollback_available"`
	ScrollbackCapacity  int      `json:"scrollback_capacity"`
	WaitingForInput     *bool    `json:"waiting_for_input,omitempty" jsonschema:"the program is blocked reading the terminal (it waits for you), as the kernel says at this moment; absent where the platform cannot tell"`
	Command             []string `json:"command,omitempty" jsonschema:"for sessions this server started"`
	Persistent          bool     `json:"persistent"`
	StartedHere         bool     `json:"started_here" jsonschema:"this server started the session (and stops it on disconnect unless persistent)"`
}

func (s *Server) status(ctx context.Context, in SessionInput) (string, StatusOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", StatusOutput{}, err
	}
	d, err := call[wire.StatusData](ctx, t.socket, map[string]any{"type": "STATUS", "input": true})
	if err != nil {
		return "", StatusOutput{}, err
	}
	out := StatusOutput{
		Session: in.Session, Socket: t.socket, Running: d.Running, ExitCode: d.ExitCode,
		Size:                TermSize{Cols: d.Size.Cols, Rows: d.Size.Rows},
		ScrollbackAvailable: d.ScrollbackAvailable, ScrollbackCapacity: d.ScrollbackCapacity,
		WaitingForInput: d.WaitingForInput,
	}
	if e := t.entry; e != nil {
		out.Session, out.Command, out.Persistent, out.StartedHere = e.ID, e.Command, e.Persistent, true
	}
	text := fmt.Sprintf("Running: %t\n", d.Running)
	if d.ExitCode != nil {
		text += fmt.Sprintf("Exit code: %d\n", *d.ExitCode)
	}
	if d.WaitingForInput != nil {
		text += fmt.Sprintf("Waiting for input: %t\n", *d.WaitingForInput)
	}
	text += fmt.Sprintf("Size: %dx%d\nScrollback: %d/%d\nSocket: %s",
		d.Size.Cols, d.Size.Rows, d.ScrollbackAvailable, d.ScrollbackCapacity, t.socket)
	return text, out, nil
}

var listTool = toolDef{tool: mcp.Tool{
	Name:        "list",
	Description: "This user's sessions: those started here by handle, others by socket path (also a handle), with command, pid, state (running, exited and code, stale), size and age.",
}}

// ListInput takes no arguments.
type ListInput struct{}

// ListedSession is one row of list.
type ListedSession struct {
	Session     string    `json:"session" jsonschema:"handle for the other tools: the short id for sessions started here, else the socket path"`
	Socket      string    `json:"socket"`
	Command     []string  `json:"command,omitempty"`
	PID         int       `json:"pid,omitempty" jsonschema:"the session daemon's pid"`
	State       string    `json:"state" jsonschema:"running, exited, stale (the daemon is gone) or unreachable"`
	ExitCode    *int      `json:"exit_code,omitempty"`
	Size        *TermSize `json:"size,omitempty"`
	AgeSeconds  int64     `json:"age_seconds"`
	StartedHere bool      `json:"started_here" jsonschema:"this server started it (and stops it on disconnect unless persistent)"`
	Persistent  bool      `json:"persistent"`
	StartedAt   string    `json:"started_at" jsonschema:"RFC 3339 time"`
}

// ListOutput is every session of this user.
type ListOutput struct {
	Sessions []ListedSession `json:"sessions"`
}

func (s *Server) list(ctx context.Context, _ ListInput) (string, ListOutput, error) {
	all, err := wire.List(ctx)
	if err != nil {
		return "", ListOutput{}, err
	}
	mine := map[string]*entry{}
	for _, e := range s.reg.all() {
		mine[e.Socket] = e
	}
	out := ListOutput{Sessions: make([]ListedSession, 0, len(all))}
	for _, l := range all {
		row := ListedSession{
			Session: l.Socket, Socket: l.Socket, Command: l.Command, PID: l.PID,
			State: l.State, ExitCode: l.ExitCode, AgeSeconds: l.AgeSeconds,
			StartedAt: l.Started.Format(time.RFC3339),
		}
		if l.Size != nil {
			row.Size = &TermSize{Cols: l.Size.Cols, Rows: l.Size.Rows}
		}
		if e := mine[l.Socket]; e != nil {
			row.Session, row.StartedHere, row.Persistent = e.ID, true, e.Persistent
			delete(mine, l.Socket)
		}
		out.Sessions = append(out.Sessions, row)
	}
	// Ours but not found (its registry entry and socket are gone): say so.
	for _, e := range s.reg.all() {
		if mine[e.Socket] != nil {
			out.Sessions = append(out.Sessions, ListedSession{
				Session: e.ID, Socket: e.Socket, Command: e.Command, PID: e.PID, State: wire.StateStale,
				StartedHere: true, Persistent: e.Persistent, StartedAt: e.Started.Format(time.RFC3339),
				AgeSeconds: int64(time.Since(e.Started) / time.Second),
			})
		}
	}
	if len(out.Sessions) == 0 {
		return "No sessions. Start one with the start tool.", out, nil
	}
	var b strings.Builder
	for _, r := range out.Sessions {
		state := r.State
		if r.ExitCode != nil {
			state = fmt.Sprintf("exited (code %d)", *r.ExitCode)
		}
		origin := ""
		if r.StartedHere {
			origin = ", started here"
		}
		if r.Persistent {
			origin += ", persistent"
		}
		// Quoted as a shell reads it back, as ptyplex list shows it: the
		// words stay apart and a newline in an argument cannot split the
		// line of its session.
		cmd := shquote.Join(r.Command)
		if cmd == "" {
			cmd = "(command unknown)"
		}
		fmt.Fprintf(&b, "%s: %s — %s%s; socket %s, pid %d, age %ds\n", r.Session, cmd, state, origin, r.Socket, r.PID, r.AgeSeconds)
	}
	return b.String(), out, nil
}
