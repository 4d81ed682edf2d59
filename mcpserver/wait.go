package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/session"
)

// waitSpec is a validated wait request. Exactly one mode applies.
type waitSpec struct {
	mode     waitMode
	line     int // 1-based screen line; 0 = whole screen
	text     string
	regex    *regexp.Regexp
	quietFor time.Duration
	timeout  time.Duration
	clamped  bool // timeout_ms was over the maximum
}

type waitMode int

const (
	waitActivity    waitMode = iota // any output or exit
	waitExit                        // the program exits
	waitChange                      // the watched line changes
	waitContains                    // the line/screen contains text
	waitNotContains                 // the line/screen no longer contains text
	waitRegex                       // the line/screen matches a regex
	waitQuiet                       // no output for quietFor
)

// waitOutcome is how a wait ended.
type waitOutcome struct {
	Met      bool   // the condition came true (or output arrived, or exit, per mode)
	Already  bool   // the condition was true before waiting
	TimedOut bool   // the timeout passed first
	Exited   bool   // the program has exited
	ExitCode *int   // set once exited and known
	Match    string // for regex: the matched text; for contains: the line or screen
}

// waiter runs waits against one socket. It is event-driven: the daemon's
// WAIT in activity mode blocks until output or exit (bounded by
// timeout_ms), and the screen is re-read only after each such event. Only
// the quiet mode relies on a timer, which is what "quiet for D" means.
type waiter struct {
	socket   string
	deadline time.Time
}

func runWait(ctx context.Context, socket string, w waitSpec) (waitOutcome, error) {
	wt := waiter{socket: socket, deadline: time.Now().Add(w.timeout)}
	switch w.mode {
	case waitExit:
		return wt.exit(ctx)
	case waitQuiet:
		return wt.quiet(ctx, w.quietFor)
	case waitActivity:
		return wt.activity(ctx)
	default:
		return wt.condition(ctx, w)
	}
}

// waitReq is a WAIT bounded by the time left (and by limit when > 0); ok is
// false once the deadline has passed.
func (wt waiter) waitReq(activity bool, limit time.Duration) (map[string]any, bool) {
	left := time.Until(wt.deadline)
	if left <= 0 {
		return nil, false
	}
	if limit > 0 && limit < left {
		left = limit
	}
	return map[string]any{"type": "WAIT", "activity": activity, "timeout_ms": max(left.Milliseconds(), 1)}, true
}

func (wt waiter) send(ctx context.Context, activity bool, limit time.Duration) (session.WaitData, bool, error) {
	req, ok := wt.waitReq(activity, limit)
	if !ok {
		return session.WaitData{}, false, nil
	}
	d, err := call[session.WaitData](ctx, wt.socket, req)
	return d, true, err
}

func (wt waiter) activity(ctx context.Context) (waitOutcome, error) {
	d, ok, err := wt.send(ctx, true, 0)
	if err != nil || !ok || d.TimedOut {
		return waitOutcome{TimedOut: true}, err
	}
	o := waitOutcome{Met: true, Exited: isTrue(d.Exited)}
	return wt.withExitCode(ctx, o)
}

func (wt waiter) exit(ctx context.Context) (waitOutcome, error) {
	d, ok, err := wt.send(ctx, false, 0)
	if err != nil || !ok || d.TimedOut {
		return waitOutcome{TimedOut: true}, err
	}
	return waitOutcome{Met: true, Exited: true, ExitCode: d.ExitCode}, nil
}

// quiet returns once a WAIT of quietFor passes without output.
func (wt waiter) quiet(ctx context.Context, quietFor time.Duration) (waitOutcome, error) {
	for {
		d, ok, err := wt.send(ctx, true, quietFor)
		if err != nil {
			return waitOutcome{}, err
		}
		switch {
		case !ok:
			return waitOutcome{TimedOut: true}, nil
		case isTrue(d.Exited):
			return wt.withExitCode(ctx, waitOutcome{Exited: true})
		case d.TimedOut && !time.Now().Before(wt.deadline):
			return waitOutcome{TimedOut: true}, nil
		case d.TimedOut:
			return waitOutcome{Met: true}, nil
		}
	}
}

// condition re-checks the line or screen after every burst of output.
func (wt waiter) condition(ctx context.Context, w waitSpec) (waitOutcome, error) {
	baseline, err := wt.watched(ctx, w.line)
	if err != nil {
		return waitOutcome{}, err
	}
	if m, ok := w.met(baseline); ok && w.mode != waitChange {
		return waitOutcome{Met: true, Already: true, Match: m}, nil
	}
	for {
		d, ok, err := wt.send(ctx, true, 0)
		if err != nil {
			return waitOutcome{}, err
		}
		if !ok || d.TimedOut {
			return waitOutcome{TimedOut: true}, nil
		}
		text, err := wt.watched(ctx, w.line)
		if err != nil {
			return waitOutcome{}, err
		}
		if w.mode == waitChange && text != baseline {
			return waitOutcome{Met: true, Match: text}, nil
		}
		if m, ok := w.met(text); ok && w.mode != waitChange {
			return waitOutcome{Met: true, Match: m, Exited: isTrue(d.Exited)}, nil
		}
		if isTrue(d.Exited) {
			return wt.withExitCode(ctx, waitOutcome{Exited: true})
		}
	}
}

// met tests a pattern condition and returns what matched.
func (w waitSpec) met(text string) (string, bool) {
	switch w.mode {
	case waitContains:
		return w.text, strings.Contains(text, w.text)
	case waitNotContains:
		return "", !strings.Contains(text, w.text)
	case waitRegex:
		m := w.regex.FindString(text)
		return m, w.regex.MatchString(text)
	}
	return "", false
}

// watched is the plain text of a screen line, or of the whole screen
// without its trailing blank lines, so that `$` in a pattern means "the
// end of what is printed" (a prompt on the last non-blank line). The
// daemon trims trailing spaces of every line.
func (wt waiter) watched(ctx context.Context, line int) (string, error) {
	req := map[string]any{"type": "OUTPUT", "format": "ascii"}
	if line > 0 {
		req["from"], req["to"] = line, line
	}
	out, err := call[session.OutputData](ctx, wt.socket, req)
	if err != nil {
		return "", err
	}
	if line > out.Size.Rows {
		return "", fmt.Errorf("line %d is off the screen, which has %d lines (lines are numbered 1..%d)", line, out.Size.Rows, out.Size.Rows)
	}
	if line > 0 {
		return strings.TrimSuffix(out.Screen, "\n"), nil
	}
	return strings.TrimRight(out.Screen, "\n"), nil
}

// withExitCode fills in the exit code of an exited program from STATUS.
func (wt waiter) withExitCode(ctx context.Context, o waitOutcome) (waitOutcome, error) {
	if !o.Exited {
		return o, nil
	}
	st, err := call[session.StatusData](ctx, wt.socket, map[string]any{"type": "STATUS"})
	if err == nil {
		o.ExitCode = st.ExitCode
	}
	return o, nil
}

func isTrue(p *bool) bool { return p != nil && *p }
