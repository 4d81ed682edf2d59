//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/mcpserver"
)

func init() {
	register("mcp", "serve sessions to AI agents over the Model Context Protocol (stdio)", runMCP)
}

const mcpAbout = `
Runs a Model Context Protocol server on stdin/stdout, for AI agents (Claude
Code, Claude Desktop, Cursor, Codex, Gemini CLI, ...). Its tools start
programs in terminals and drive them: start, input, output, wait, run,
screenshot, status, list, kill, resize, stop, debug. The sessions are ordinary ptyplex
daemons: 'ptyplex output --socket <socket>' shows what the agent sees.

When the client disconnects (or this process gets SIGTERM, SIGINT or
SIGHUP), every session it started is stopped, except those started with
"persistent": true. A session whose program has exited ends by itself
after --idle-exit (default 10m) without requests.

Register it with a client, e.g. Claude Code:
  claude mcp add ptyplex -- ptyplex mcp
or in an mcpServers configuration file:
  {"mcpServers": {"ptyplex": {"command": "ptyplex", "args": ["mcp"]}}}`

func runMCP(args []string) int {
	c := newCLI("mcp", "ptyplex mcp [--log FILE] [--idle-exit D]", mcpAbout, false)
	logPath := c.fs.String("log", "", "append server events (sessions stopped, errors) to `FILE` (created 0600; an existing one must be a private regular file of yours); stdout carries the protocol. Should a write fail (a full disk), stderr says so once and gets the rest")
	idleExit := c.fs.Duration("idle-exit", mcpserver.DefaultIdleExit, "--idle-exit of the sessions the server starts: a finished session ends after `DURATION` without requests (0: never)")
	if done, code := c.parse(args); done {
		return code
	}
	if c.fs.NArg() > 0 {
		return c.usageError("unexpected arguments: %v", c.fs.Args())
	}
	// As start refuses it: a negative duration is a mistake, not "never".
	if *idleExit < 0 {
		return c.usageError("invalid --idle-exit %v: must not be negative (0: never)", *idleExit)
	}
	var logger *slog.Logger
	if *logPath != "" {
		noteExposed("--log", *logPath)
		f, err := safefile.OpenAppend(*logPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error: open log: %v\n", err)
			return exitFail
		}
		defer f.Close()
		logger = slog.New(slog.NewTextHandler(&logFile{f: f, path: *logPath}, nil))
	}
	idle := *idleExit
	if idle == 0 {
		idle = -1 // Options: negative means never
	}
	srv, err := mcpserver.New(mcpserver.Options{Logger: logger, IdleExit: idle, Version: version.Version})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return exitFail
	}
	// A client that kills us rather than closing stdin still gets its
	// sessions stopped: the signal cancels Run, which then cleans up.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex mcp: %v\n", err)
		return exitFail
	}
	return exitOK
}

// logFile is the --log file. At its first failed write (a full disk) it
// says so once on stderr and sends that line and every later one to
// stderr: stdout carries the protocol, and the MCP client keeps the
// server's stderr in its own logs, so nothing is lost. The file is not
// written again, so what it holds ends where the failure was instead of
// going on after a gap once there is room again.
type logFile struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	failed bool
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.failed {
		_, err := l.f.Write(p)
		if err == nil {
			return len(p), nil
		}
		l.failed = true
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below
		}
		fmt.Fprintf(os.Stderr, "ptyplex mcp: logging to %s failed: %v; this and later log lines go to stderr instead\n", l.path, err)
	}
	return os.Stderr.Write(p)
}
