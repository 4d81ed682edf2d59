//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ptyplex/ptyplex/internal/session/waitcond"
	"github.com/ptyplex/ptyplex/session/wire"
)

// Wait limits. Many MCP clients give up on a tool call after a minute or
// so; a longer wait is better done as several calls.
const (
	defaultWaitTimeout = 10 * time.Second
	maxWaitTimeout     = 10 * time.Minute
)

var waitTool = toolDef{tool: mcp.Tool{
	Name:        "wait",
	Description: "Block until one condition holds; returns the screen. none: any output or the exit; regex: Go RE2 on the plain screen (or line N), lines joined by \\n without trailing blanks, no implicit (?m) (\"\\\\$ ?$\": a prompt at the bottom); contains; not_contains; line alone: it changes; input: the program waits for you; quiet_ms; exit. A timeout is a normal result.",
}}

// WaitInput is the wait tool's arguments.
type WaitInput struct {
	Session       string `json:"session" jsonschema:"session handle"`
	Regex         string `json:"regex,omitempty" jsonschema:"until this matches"`
	Contains      string `json:"contains,omitempty" jsonschema:"until this shows"`
	NotContains   string `json:"not_contains,omitempty" jsonschema:"until this is gone"`
	Line          int    `json:"line,omitempty" jsonschema:"screen line (1 = top)"`
	QuietMs       millis `json:"quiet_ms,omitempty" jsonschema:"until this many ms of quiet"`
	Exit          bool   `json:"exit,omitempty" jsonschema:"until it exits"`
	Input         bool   `json:"input,omitempty" jsonschema:"until it waits for input"`
	TimeoutMs     millis `json:"timeout_ms,omitempty" jsonschema:"default 10000, max 600000"`
	IncludeScreen *bool  `json:"include_screen,omitempty" jsonschema:"with the screen (default true)"`
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
		note = clampNote()
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
func timeoutClamped(ms millis) bool { return int64(ms) > maxWaitTimeout.Milliseconds() }

// clampNote says a timeout_ms was clamped. It does not repeat the number:
// one past what an int holds was read as the largest int.
func clampNote() string {
	return fmt.Sprintf("timeout_ms is over the maximum; waited at most %d ms. ", maxWaitTimeout.Milliseconds())
}

// millis is a count of milliseconds in a tool's arguments. Any JSON number
// with no fraction is read, so that a limit past what an int holds (1e20,
// 2^63) is clamped to the maximum like any other large one instead of
// refused as unreadable: such a count saturates at the largest (or
// smallest) int.
type millis int

// UnmarshalJSON implements json.Unmarshaler.
func (m *millis) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 0)
	if err == nil || errors.Is(err, strconv.ErrRange) {
		*m = millis(n) // ParseInt saturates on ErrRange
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || f != math.Trunc(f) {
		return fmt.Errorf("%s is not a whole number of milliseconds", s)
	}
	switch {
	case f >= math.MaxInt:
		*m = math.MaxInt
	case f <= math.MinInt:
		*m = math.MinInt
	default:
		*m = millis(f)
	}
	return nil
}

// clampMs turns a count of milliseconds into a Duration of at most limit,
// without the overflow of multiplying first.
func clampMs(ms millis, limit time.Duration) time.Duration {
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
