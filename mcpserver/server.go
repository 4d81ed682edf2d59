//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	s.mcp.AddReceivingMiddleware(checkLogLevel)
	s.addTools()
	return s, nil
}

// logLevels are the levels of MCP's logging/setLevel (RFC 5424's).
var logLevels = map[mcp.LoggingLevel]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

// checkLogLevel refuses logging/setLevel with a level MCP does not name
// (-32602, as the specification asks); the SDK accepted any string.
func checkLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "logging/setLevel" {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && !logLevels[p.Level] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("invalid log level %q: expected debug, info, notice, warning, error, critical, alert or emergency", p.Level)}
			}
		}
		return next(ctx, method, req)
	}
}

// Run serves one client over t until it disconnects or ctx ends, then stops
// every session this server started that is not persistent. Sessions are
// stopped whatever way the connection ended. A Server serves one
// connection: after Run, its start tool refuses new sessions.
//
// An *mcp.StdioTransport or *mcp.IOTransport is served by the server's own
// line transport on the same streams (transport.go): a line that is not a
// valid message is answered with a JSON-RPC error instead of ending the
// connection, ids are echoed exactly as the client wrote them, and the end
// of ctx cancels the calls in progress rather than waiting for them.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, s.ownTransport(t))
	cerr := s.Cleanup(context.WithoutCancel(ctx))
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		err = nil // the client left or we were told to stop: a normal end
	}
	return errors.Join(err, cerr)
}

// ownTransport replaces the SDK's newline-delimited transports by
// lineTransport; others are used as they are.
func (s *Server) ownTransport(t mcp.Transport) mcp.Transport {
	switch t := t.(type) {
	case *mcp.StdioTransport:
		return &lineTransport{r: os.Stdin, w: os.Stdout, maxLine: t.MaxLineLength, log: s.log}
	case *mcp.IOTransport:
		return &lineTransport{r: t.Reader, w: t.Writer, wc: t.Writer, maxLine: t.MaxLineLength, log: s.log}
	}
	return t
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
const instructions = `ptyplex runs programs in real pseudo-terminals (shells, REPLs, vim, git rebase -i, gdb, htop, other CLIs) and lets you drive them as a human at a keyboard would. Pick the tool by what you need:

- Shell commands: start {"command":["bash"],"shell_integration":true}, then run {"session":"s1","command":"make test"}. One call types the command, waits for it to end and returns its exit_code and its output alone (from the scrollback if it scrolled). Do not type shell commands with input and scrape the screen.
- A program that asks (a REPL, a password or y/n prompt, an installer): input {"session":"s1","text":"6*7","keys":["Enter"],"wait_input":true}. wait_input returns once the program is blocked reading its terminal again; it neither returns during a pause in the output nor waits on a program that works in silence. Use wait {"input":true} for the same without typing, wait regex/contains when you know the text to expect.
- Reading the screen in a long session: output once, then output {"since":"<token of your last read>"} returns only the lines that changed; add max_chars to bound any read.
- Colours, a highlighted menu entry, a layout: screenshot returns the screen as an image.
- Done: stop {"session":"s1"}. Sessions not started as persistent are stopped when this connection ends.

Prefer wait over repeated output calls: it returns the moment the condition holds. A human can watch any session with: ptyplex output --socket <socket>.`
