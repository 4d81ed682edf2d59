//go:build unix

package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/internal/cescape"
)

// launchTimeout bounds one `ptyplex start`; it returns well under two
// seconds normally and gives up on its daemon after fifteen.
const launchTimeout = 30 * time.Second

// startSpec is what the start tool asks for.
type startSpec struct {
	Command    []string
	Size       string // "COLSxROWS"; "" keeps the default 80x24
	Scrollback *int
	Socket     string
	Plain      bool
	Dir        string
	Env        map[string]string
	IdleExit   time.Duration // 0: none
	// ShellIntegration: start --shell-integration (bash and zsh only).
	ShellIntegration bool
}

// started is what `ptyplex start` printed.
type started struct {
	Socket string
	PID    int
	Auto   bool
	// Warnings are the lines start wrote on stderr although it started
	// the session (its record for `ptyplex list` could not be written,
	// say): the agent is told them.
	Warnings []string
}

// launch runs `<binary> start [flags] -- COMMAND...`, exactly what a human
// runs, so the session is an ordinary daemon the CLI can talk to. The
// daemon inherits the environment and working directory of the start
// process, which is how env and cwd reach the program.
func launch(ctx context.Context, binary string, spec startSpec) (started, error) {
	args := []string{"start"}
	if spec.Socket != "" {
		args = append(args, "--socket", spec.Socket)
	}
	if spec.Size != "" {
		args = append(args, "--size", spec.Size)
	}
	if spec.Scrollback != nil {
		args = append(args, "--scrollback", strconv.Itoa(*spec.Scrollback))
	}
	if spec.IdleExit > 0 {
		args = append(args, "--idle-exit", spec.IdleExit.String())
	}
	if spec.Plain {
		args = append(args, "--emulator", "custom")
	}
	if spec.ShellIntegration {
		args = append(args, "--shell-integration")
	}
	args = append(args, "--")
	args = append(args, spec.Command...)

	// Not the tool call's context: a start cancelled half way could leave a
	// daemon running that nobody knows about, so it always runs to the end.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), launchTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = spec.Dir
	if len(spec.Env) > 0 {
		keys := make([]string, 0, len(spec.Env))
		for k := range spec.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		env := os.Environ()
		for _, k := range keys {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return started{}, fmt.Errorf("invalid environment variable name %q", k)
			}
			env = append(env, k+"="+spec.Env[k])
		}
		cmd.Env = env
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		msg = strings.TrimPrefix(msg, "Error: ")
		if i := strings.Index(msg, "\nUsage:"); i >= 0 {
			msg = msg[:i] // the CLI's usage line means nothing to an agent
		}
		if msg == "" {
			msg = err.Error()
		}
		return started{}, fmt.Errorf("could not start %q: %s", strings.Join(spec.Command, " "), msg)
	}
	st, err := parseStarted(stdout.String())
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			st.Warnings = append(st.Warnings, cescape.EscapeControls(line))
		}
	}
	return st, nil
}

// parseStarted reads the Socket:, PID: and Auto-generated: lines.
func parseStarted(out string) (started, error) {
	var s started
	var haveSocket, havePID bool
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Socket":
			s.Socket, haveSocket = v, v != ""
		case "PID":
			n, err := strconv.Atoi(v)
			if err == nil && n > 0 {
				s.PID, havePID = n, true
			}
		case "Auto-generated":
			s.Auto = v == "true"
		}
	}
	if !haveSocket || !havePID {
		return started{}, fmt.Errorf("unexpected output from ptyplex start: %q", out)
	}
	return s, nil
}
