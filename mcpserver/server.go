package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Server.
type Options struct {
	// Binary is the ptyplex executable that starts sessions; "" means this
	// very program (os.Executable), which is right for `ptyplex mcp`.
	Binary string
	// Version is reported to clients in the initialize handshake.
	Version string
	// Logger receives lifecycle events (sessions stopped on disconnect,
	// cleanup failures). nil discards them. It must not write to stdout,
	// which carries the protocol.
	Logger *slog.Logger
	// IdleExit is the --idle-exit of the sessions the start tool starts: a
	// session whose program has exited ends by itself after this long
	// without requests. 0 means DefaultIdleExit; negative means never.
	IdleExit time.Duration
}

// DefaultIdleExit is how long a finished session started by the MCP server
// stays readable without requests: long enough for an agent to read the
// result, short enough that finished sessions do not pile up.
const DefaultIdleExit = 10 * time.Minute

// Server is an MCP server whose tools drive ptyplex sessions.
type Server struct {
	binary   string
	idleExit time.Duration
	log      *slog.Logger
	reg      *registry
	mcp      *mcp.Server
}

// cleanupTimeout bounds stopping every session when the client leaves.
const cleanupTimeout = 30 * time.Second

// New builds a Server with all its tools registered.
func New(opts Options) (*Server, error) {
	bin := opts.Binary
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("locate the ptyplex binary: %w", err)
		}
		bin = self
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	idle := opts.IdleExit
	switch {
	case idle == 0:
		idle = DefaultIdleExit
	case idle < 0:
		idle = 0
	}
	s := &Server{binary: bin, idleExit: idle, log: log, reg: newRegistry()}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "ptyplex", Title: "ptyplex terminals", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: opts.Logger})
	s.addTools()
	return s, nil
}

// Run serves one client over t until it disconnects or ctx ends, then stops
// every session this server started that is not persistent. Sessions are
// stopped whatever way the connection ended. A Server serves one
// connection: after Run, its start tool refuses new sessions.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	cerr := s.Cleanup(context.WithoutCancel(ctx))
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		err = nil // the client left or we were told to stop: a normal end
	}
	return errors.Join(err, cerr)
}

// Cleanup stops the non-persistent sessions this server started and forgets
// them. Persistent sessions keep running; their sockets were reported by
// start and list.
func (s *Server) Cleanup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	var doomed []*entry
	for _, e := range s.reg.close() {
		if e.Persistent {
			s.log.Info("leaving persistent session running", "session", e.ID, "socket", e.Socket, "pid", e.PID)
			continue
		}
		doomed = append(doomed, e)
		s.reg.remove(e.ID)
	}
	err := stopAll(ctx, doomed)
	for _, e := range doomed {
		s.log.Info("stopped session on disconnect", "session", e.ID, "socket", e.Socket)
	}
	if err != nil {
		s.log.Warn("stopping sessions on disconnect", "err", err)
	}
	return err
}

// instructions is sent to clients at initialization; many agents show it
// to the model as the server's overview.
const instructions = `ptyplex runs interactive terminal programs (shells, REPLs, vim, git rebase -i, gdb, htop, other CLIs) in pseudo-terminals and lets you drive them like a human at a keyboard.

Typical loop:
1. start {"command":["bash","--norc"]} -> returns a session handle such as "s1".
2. input {"session":"s1","text":"ls -l","keys":["Enter"]} to type.
3. wait {"session":"s1","regex":"\\$ ?$"} or {"session":"s1","quiet_ms":500} until the program has answered (wait returns the screen).
4. output {"session":"s1"} to read the screen (add "from":-100 for scrollback). Each read returns a token; in a long session read with {"session":"s1","since":"<token of your last read>"} to get only what changed, and add "max_chars" to bound a read.
5. stop {"session":"s1"} when done. Sessions you did not start as persistent are stopped automatically when this connection ends.

Prefer wait over repeated output calls: it returns the moment the screen changes. A human can watch any session with: ptyplex output --socket <socket>.`
