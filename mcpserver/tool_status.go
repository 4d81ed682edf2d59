package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/session"
)

var statusTool = toolDef{tool: mcp.Tool{
	Name:        "status",
	Title:       "Is the program still running?",
	Description: `Report whether the program in a session is still running, its exit code once it has exited, the terminal size and how much scrollback is kept. Cheap; does not change anything (it does not consume the "new output" flag that wait uses). To block until the program exits, use wait with exit true instead of calling status in a loop.`,
}}

// SessionInput names one session.
type SessionInput struct {
	Session string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
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
	Command             []string `json:"command,omitempty" jsonschema:"for sessions this server started"`
	Persistent          bool     `json:"persistent"`
	StartedHere         bool     `json:"started_here" jsonschema:"this server started the session (and stops it on disconnect unless persistent)"`
}

func (s *Server) status(ctx context.Context, in SessionInput) (string, StatusOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", StatusOutput{}, err
	}
	d, err := call[session.StatusData](ctx, t.socket, map[string]any{"type": "STATUS"})
	if err != nil {
		return "", StatusOutput{}, err
	}
	out := StatusOutput{
		Session: in.Session, Socket: t.socket, Running: d.Running, ExitCode: d.ExitCode,
		Size:                TermSize{Cols: d.Size.Cols, Rows: d.Size.Rows},
		ScrollbackAvailable: d.ScrollbackAvailable, ScrollbackCapacity: d.ScrollbackCapacity,
	}
	if e := t.entry; e != nil {
		out.Session, out.Command, out.Persistent, out.StartedHere = e.ID, e.Command, e.Persistent, true
	}
	text := fmt.Sprintf("Running: %t\n", d.Running)
	if d.ExitCode != nil {
		text += fmt.Sprintf("Exit code: %d\n", *d.ExitCode)
	}
	text += fmt.Sprintf("Size: %dx%d\nScrollback: %d/%d\nSocket: %s",
		d.Size.Cols, d.Size.Rows, d.ScrollbackAvailable, d.ScrollbackCapacity, t.socket)
	return text, out, nil
}

var listTool = toolDef{tool: mcp.Tool{
	Name:        "list",
	Title:       "List my terminal sessions",
	Description: `List the sessions this MCP server started (during this connection, plus persistent ones it still knows), with handle, socket, command, daemon pid, whether the program is running or its exit code, and whether the session is persistent. Use it to find a handle you lost or to check what is still running before starting more. Sessions stopped with stop are no longer listed.`,
}}

// ListInput takes no arguments.
type ListInput struct{}

// ListedSession is one row of list.
type ListedSession struct {
	Session    string   `json:"session"`
	Socket     string   `json:"socket"`
	Command    []string `json:"command"`
	PID        int      `json:"pid" jsonschema:"the session daemon's pid"`
	State      string   `json:"state" jsonschema:"running, exited, or unreachable (the daemon is gone)"`
	ExitCode   *int     `json:"exit_code,omitempty"`
	Persistent bool     `json:"persistent"`
	StartedAt  string   `json:"started_at" jsonschema:"RFC 3339 time"`
}

// ListOutput is every session this server started.
type ListOutput struct {
	Sessions []ListedSession `json:"sessions"`
}

// listProbeTimeout bounds the STATUS sent to each session by list.
const listProbeTimeout = 3 * time.Second

func (s *Server) list(ctx context.Context, _ ListInput) (string, ListOutput, error) {
	entries := s.reg.all()
	out := ListOutput{Sessions: make([]ListedSession, len(entries))}
	var wg sync.WaitGroup
	for i, e := range entries {
		out.Sessions[i] = ListedSession{
			Session: e.ID, Socket: e.Socket, Command: e.Command, PID: e.PID,
			Persistent: e.Persistent, StartedAt: e.Started.Format(time.RFC3339),
		}
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, listProbeTimeout)
			defer cancel()
			d, err := call[session.StatusData](pctx, e.Socket, map[string]any{"type": "STATUS"})
			row := &out.Sessions[i]
			switch {
			case err != nil:
				row.State = "unreachable"
			case d.Running:
				row.State = "running"
			default:
				row.State, row.ExitCode = "exited", d.ExitCode
			}
		})
	}
	wg.Wait()
	if len(entries) == 0 {
		return "No sessions. Start one with the start tool.", out, nil
	}
	var b strings.Builder
	for _, r := range out.Sessions {
		state := r.State
		if r.ExitCode != nil {
			state = fmt.Sprintf("exited (code %d)", *r.ExitCode)
		}
		persist := ""
		if r.Persistent {
			persist = ", persistent"
		}
		fmt.Fprintf(&b, "%s: %s — %s%s; socket %s, pid %d\n", r.Session, strings.Join(r.Command, " "), state, persist, r.Socket, r.PID)
	}
	return b.String(), out, nil
}
