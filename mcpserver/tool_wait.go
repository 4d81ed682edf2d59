//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/waitcond"
	"github.com/ptyplex/ptyplex/session/wire"
)

// Wait limits. Many MCP clients give up on a tool call after a minute or
// so; a longer wait is better done as several calls.
const (
	defaultWaitTimeout = 10 * time.Second
	maxWaitTimeout     = 10 * time.Minute
)

var waitTool = toolDef{tool: mcp.Tool{
	Name:  "wait",
	Title: "Wait for a terminal to change",
	Description: `Block until something happens in a session, then return (by default with the screen). Use it after input instead of sleeping or polling output: it returns the moment the condition holds. Choose one condition:

- (none): any new output, or the program exits.
- regex: a Go regular expression matches the screen text (or line N with line); see Matching below: {"regex":"\\$ ?$"} waits for a shell prompt, {"regex":">>> ?$"} for python's; "(?m)^42$" for a line that is exactly 42.
- contains / not_contains: plain text appears on / disappears from the screen (or line N), e.g. {"contains":"Password:"} or {"not_contains":"Loading"}.
- line alone: screen line N (1 = top) changes.
- input: the program is waiting for you: its foreground process is blocked reading the terminal and all its output is on the screen (on Linux the kernel says so; elsewhere it falls back to 500 ms without output, and the result says "detection":"quiet"). The best wait for a prompt whose text you do not know, a command that prints with pauses (quiet_ms would return in a pause) or one that works in silence (quiet_ms would return while it still works).
- quiet_ms: no output for that many milliseconds, counted from this call (the program has settled; good after starting a program or sending a command whose output you cannot predict).
- exit: the program exits; returns its exit code.

Always bounded by timeout_ms (default 10000, max 600000: a larger value is clamped to 600000 and the result says so; for longer waits call wait again). A timeout is a normal result with timed_out true, not an error: look at the returned screen and decide. If the program exits before the condition holds, the result has exited true and met false. Pattern conditions already true when wait starts return at once with already_met true. Conditions are checked against plain text (no colour codes).

To wait for the reaction to something you type, prefer input with wait_input / wait_regex / wait_contains / wait_quiet_ms: that wait only looks at output produced after the input, so it cannot return on the old prompt.

Examples: {"session":"s1","input":true}; {"session":"s1","regex":"\\$ ?$","timeout_ms":5000}; {"session":"s1","quiet_ms":300}; {"session":"s1","line":1,"contains":"READY"}; {"session":"s1","exit":true,"timeout_ms":60000}.

Matching (the same in the ptyplex CLI): ` + wire.Semantics,
}}

// WaitInput is the wait tool's arguments.
type WaitInput struct {
	Session       string `json:"session" jsonschema:"session handle from start (e.g. \"s1\") or a socket path"`
	Regex         string `json:"regex,omitempty" jsonschema:"wait until this Go regular expression matches the screen (or the line)"`
	Contains      string `json:"contains,omitempty" jsonschema:"wait until the screen (or the line) contains this text"`
	NotContains   string `json:"not_contains,omitempty" jsonschema:"wait until the screen (or the line) no longer contains this text"`
	Line          int    `json:"line,omitempty" jsonschema:"1-based screen line to watch; alone: wait until it changes"`
	QuietMs       int    `json:"quiet_ms,omitempty" jsonschema:"wait until there has been no output for this many milliseconds"`
	Exit          bool   `json:"exit,omitempty" jsonschema:"wait until the program exits"`
	Input         bool   `json:"input,omitempty" jsonschema:"wait until the program waits for input (blocked reading the terminal, its output all shown)"`
	TimeoutMs     int    `json:"timeout_ms,omitempty" jsonschema:"give up after this many milliseconds (default 10000, max 600000; larger values are clamped to 600000); a timeout is a normal result"`
	IncludeScreen *bool  `json:"include_screen,omitempty" jsonschema:"return the plain-text screen with the result (default true)"`
}

// WaitOutput is how the wait ended.
type WaitOutput struct {
	Session    string `json:"session"`
	Condition  string `json:"condition" jsonschema:"the condition waited for, in words"`
	Met        bool   `json:"met" jsonschema:"the condition holds (for the default mode: output arrived or the program exited)"`
	AlreadyMet bool   `json:"already_met,omitempty" jsonschema:"the condition held before waiting"`
	TimedOut   bool   `json:"timed_out" jsonschema:"the timeout passed first"`
	Exited     bool   `json:"exited" jsonschema:"the program has exited"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Match      string `json:"match,omitempty" jsonschema:"for regex: the matched text"`
	Detection  string `json:"detection,omitempty" jsonschema:"for input waits: kernel (the program was seen blocked reading its terminal) or quiet (the platform cannot tell; no output for 500 ms)"`
	Screen     string `json:"screen,omitempty" jsonschema:"the screen as plain text after the wait"`
	ElapsedMs  int64  `json:"elapsed_ms"`
	TimeoutMs  int64  `json:"timeout_ms" jsonschema:"the timeout applied, after clamping to the maximum"`
}

// parseWait validates the arguments and picks the mode.
func parseWait(in WaitInput) (waitcond.Spec, string, error) {
	w := waitcond.Spec{Timeout: defaultWaitTimeout, Line: in.Line}
	if in.TimeoutMs < 0 {
		return w, "", fmt.Errorf("invalid timeout_ms %d: must be positive", in.TimeoutMs)
	}
	if in.TimeoutMs > 0 {
		// Clamp the count before making it a Duration: near 2^63 ns the
		// product wraps negative and the wait would time out at once.
		w.Timeout = clampMs(in.TimeoutMs, maxWaitTimeout)
	}
	if in.Line < 0 {
		return w, "", fmt.Errorf("invalid line %d: screen lines are numbered from 1", in.Line)
	}
	if in.QuietMs < 0 {
		return w, "", fmt.Errorf("invalid quiet_ms %d: must be positive", in.QuietMs)
	}
	var set []string
	for name, on := range map[string]bool{"regex": in.Regex != "", "contains": in.Contains != "", "not_contains": in.NotContains != ""} {
		if on {
			set = append(set, name)
		}
	}
	if len(set) > 1 {
		return w, "", fmt.Errorf("choose one of regex, contains and not_contains (got %s)", strings.Join(set, " and "))
	}
	pattern := len(set) == 1
	if (in.Exit || in.QuietMs > 0 || in.Input) && (pattern || in.Line > 0) || in.Exit && in.QuietMs > 0 || in.Input && (in.Exit || in.QuietMs > 0) {
		return w, "", fmt.Errorf("exit, quiet_ms and input cannot be combined with each other or with line, regex, contains or not_contains")
	}
	where := "the screen"
	if in.Line > 0 {
		where = fmt.Sprintf("line %d", in.Line)
	}
	switch {
	case in.Input:
		w.Mode = waitcond.Input
		return w, "the program waits for input", nil
	case in.Exit:
		w.Mode = waitcond.Exit
		return w, "the program exits", nil
	case in.QuietMs > 0:
		// Quiet for longer than the longest wait could never be seen.
		w.Mode, w.QuietFor = waitcond.Quiet, clampMs(in.QuietMs, maxWaitTimeout)
		return w, fmt.Sprintf("no output for %v", w.QuietFor), nil
	case in.Regex != "":
		re, err := regexp.Compile(in.Regex)
		if err != nil {
			return w, "", fmt.Errorf("invalid regex %q: %v", in.Regex, err)
		}
		w.Mode, w.Regex = waitcond.Regex, re
		return w, fmt.Sprintf("%s matches /%s/", where, in.Regex), nil
	case in.Contains != "":
		w.Mode, w.Text = waitcond.Contains, in.Contains
		return w, fmt.Sprintf("%s contains %q", where, in.Contains), nil
	case in.NotContains != "":
		w.Mode, w.Text = waitcond.NotContains, in.NotContains
		return w, fmt.Sprintf("%s no longer contains %q", where, in.NotContains), nil
	case in.Line > 0:
		w.Mode = waitcond.Change
		return w, fmt.Sprintf("line %d changes", in.Line), nil
	}
	w.Mode = waitcond.Activity
	return w, "new output or exit", nil
}

func (s *Server) wait(ctx context.Context, in WaitInput) (string, WaitOutput, error) {
	t, err := s.reg.resolve(in.Session)
	if err != nil {
		return "", WaitOutput{}, err
	}
	spec, cond, err := parseWait(in)
	if err != nil {
		return "", WaitOutput{}, err
	}
	note := ""
	if timeoutClamped(in.TimeoutMs) {
		note = fmt.Sprintf("timeout_ms %d is over the maximum; waited at most %d ms. ", in.TimeoutMs, maxWaitTimeout.Milliseconds())
	}
	out, text, err := waitAndReport(ctx, t.socket, spec, cond, note, in.IncludeScreen == nil || *in.IncludeScreen)
	if err != nil {
		return "", WaitOutput{}, err
	}
	out.Session = in.Session
	return text, out, nil
}

// waitAndReport runs a wait and words its outcome for the agent (after
// note), with the screen after it when withScreen; the wait and input
// tools share it.
func waitAndReport(ctx context.Context, socket string, spec waitcond.Spec, cond, note string, withScreen bool) (WaitOutput, string, error) {
	begin := time.Now()
	o, err := runWait(ctx, socket, spec)
	if err != nil {
		return WaitOutput{}, "", err
	}
	out := WaitOutput{
		Condition: cond, Met: o.Met, AlreadyMet: o.Already,
		TimedOut: o.TimedOut, Exited: o.Exited, ExitCode: o.ExitCode,
		ElapsedMs: time.Since(begin).Milliseconds(), TimeoutMs: spec.Timeout.Milliseconds(),
	}
	if spec.Mode == waitcond.Regex {
		out.Match = o.Match
	}
	if spec.Mode == waitcond.Input {
		out.Detection = o.Detection
	}
	var b strings.Builder
	b.WriteString(note)
	switch {
	case o.Already:
		fmt.Fprintf(&b, "Condition already met: %s.", cond)
	case o.Met && o.Exited && spec.Mode == waitcond.Exit:
		fmt.Fprintf(&b, "The program exited with code %s.", codeText(o.ExitCode))
	case o.Met:
		fmt.Fprintf(&b, "Condition met after %d ms: %s.", out.ElapsedMs, cond)
		if o.Exited {
			fmt.Fprintf(&b, " The program has exited (code %s).", codeText(o.ExitCode))
		}
	case o.TimedOut:
		fmt.Fprintf(&b, "Timed out after %v waiting for: %s.", spec.Timeout, cond)
	case o.Exited:
		fmt.Fprintf(&b, "The program exited (code %s) before the condition was met: %s.", codeText(o.ExitCode), cond)
	}
	if out.Match != "" {
		fmt.Fprintf(&b, " Matched %q.", out.Match)
	}
	if withScreen {
		// The wait has ended; a cancelled call still deserves its screen.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		d, err := call[wire.OutputData](sctx, socket, map[string]any{"type": "OUTPUT", "format": "ascii"})
		cancel()
		if err == nil {
			out.Screen = d.Screen
			fmt.Fprintf(&b, "\nScreen (cursor at row %d, col %d):\n%s", d.Cursor.Row+1, d.Cursor.Col+1, d.Screen)
		}
	}
	return out, b.String(), nil
}

// timeoutClamped reports whether timeout_ms is over the maximum.
func timeoutClamped(ms int) bool { return int64(ms) > maxWaitTimeout.Milliseconds() }

// clampMs turns a count of milliseconds into a Duration of at most limit,
// without the overflow of multiplying first.
func clampMs(ms int, limit time.Duration) time.Duration {
	if int64(ms) > limit.Milliseconds() {
		return limit
	}
	return time.Duration(ms) * time.Millisecond
}

func codeText(p *int) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}
