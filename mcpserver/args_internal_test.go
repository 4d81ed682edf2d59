//go:build unix

package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/session/waitcond"
)

// The tools' argument checks run in the server process, before any
// daemon is asked: each refusal names what to change, and each accepted
// combination becomes the wait it describes.

func TestParseInputWait(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     InputInput
		wait   bool
		mode   waitcond.Mode
		cond   string // part of the description
		errHas string
	}{
		{name: "no wait", in: InputInput{}},
		{name: "timeout alone", in: InputInput{TimeoutMs: 500}, errHas: "timeout_ms bounds a wait"},
		{name: "two waits", in: InputInput{WaitRegex: "x", WaitQuietMs: 100}, errHas: "choose one of"},
		{name: "input", in: InputInput{WaitInput: true}, wait: true, mode: waitcond.Input, cond: "waits for input (in output after the input)"},
		{name: "regex", in: InputInput{WaitRegex: `\$ $`}, wait: true, mode: waitcond.Regex, cond: `matches /\$ $/`},
		{name: "contains", in: InputInput{WaitContains: "done", TimeoutMs: 2000}, wait: true, mode: waitcond.Contains, cond: `contains "done"`},
		{name: "quiet", in: InputInput{WaitQuietMs: 250}, wait: true, mode: waitcond.Quiet, cond: "no output for 250ms"},
		{name: "bad regex", in: InputInput{WaitRegex: "("}, errHas: "invalid regex"},
		{name: "negative timeout", in: InputInput{WaitContains: "x", TimeoutMs: -1}, errHas: "must be positive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, cond, wait, err := parseInputWait(c.in)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err %v, want one saying %q", err, c.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if wait != c.wait {
				t.Fatalf("wait %v, want %v", wait, c.wait)
			}
			if !wait {
				return
			}
			if spec.Mode != c.mode || !strings.Contains(cond, c.cond) {
				t.Fatalf("mode %v, description %q; want mode %v and %q", spec.Mode, cond, c.mode, c.cond)
			}
			if c.in.TimeoutMs > 0 && spec.Timeout != time.Duration(c.in.TimeoutMs)*time.Millisecond {
				t.Fatalf("timeout %v, want %d ms", spec.Timeout, c.in.TimeoutMs)
			}
		})
	}
}

func TestParseWaitRefusals(t *testing.T) {
	for _, c := range []struct {
		in     WaitInput
		errHas string
	}{
		{WaitInput{Line: -1}, "numbered from 1"},
		{WaitInput{QuietMs: -5}, "quiet_ms -5"},
		{WaitInput{Regex: "a", Contains: "b"}, "choose one of regex, contains and not_contains"},
		{WaitInput{Exit: true, QuietMs: 10}, "cannot be combined"},
		{WaitInput{Input: true, Line: 2}, "cannot be combined"},
	} {
		if _, _, err := parseWait(c.in); err == nil || !strings.Contains(err.Error(), c.errHas) {
			t.Errorf("parseWait(%+v): err %v, want one saying %q", c.in, err, c.errHas)
		}
	}
	for _, c := range []struct {
		in   WaitInput
		mode waitcond.Mode
		cond string
	}{
		{WaitInput{}, waitcond.Activity, "new output or exit"},
		{WaitInput{Exit: true}, waitcond.Exit, "the program exits"},
		{WaitInput{Line: 3}, waitcond.Change, "line 3 changes"},
		{WaitInput{Line: 2, NotContains: "busy"}, waitcond.NotContains, `line 2 no longer contains "busy"`},
	} {
		spec, cond, err := parseWait(c.in)
		if err != nil || spec.Mode != c.mode || cond != c.cond {
			t.Errorf("parseWait(%+v) = mode %v, %q, %v; want mode %v, %q", c.in, spec.Mode, cond, err, c.mode, c.cond)
		}
	}
	// A timeout past the longest wait is clamped, never wrapped negative.
	if spec, _, err := parseWait(WaitInput{TimeoutMs: 1 << 62}); err != nil || spec.Timeout != maxWaitTimeout {
		t.Errorf("huge timeout_ms: %v, %v; want %v", spec.Timeout, err, maxWaitTimeout)
	}
}

func TestReturnedLines(t *testing.T) {
	for _, c := range []struct{ from, to, want int }{
		{1, 24, 24}, // the screen
		{-5, -1, 5}, // scrollback only
		{-3, 2, 5},  // across the boundary 0, which is no line
		{5, 4, 0},   // nothing
		{-2, -2, 1}, // one scrollback line
	} {
		if got := returnedLines(c.from, c.to); got != c.want {
			t.Errorf("returnedLines(%d, %d) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}

func TestCodeText(t *testing.T) {
	three := 3
	if got := codeText(&three); got != "3" {
		t.Errorf("codeText(3) = %q", got)
	}
	if got := codeText(nil); got != "unknown" {
		t.Errorf("codeText(nil) = %q, want unknown", got)
	}
}

// The fixed cursor-key modes are decided without asking the daemon (no
// socket is given); an unknown one is refused with the names it takes.
func TestAppCursorFixedModes(t *testing.T) {
	s := &Server{}
	for mode, want := range map[string]bool{"normal": false, "application": true} {
		got, err := s.appCursor(context.Background(), "", mode)
		if err != nil || got != want {
			t.Errorf("appCursor(%q) = %v, %v; want %v", mode, got, err, want)
		}
	}
	if _, err := s.appCursor(context.Background(), "", "vt52"); err == nil || !strings.Contains(err.Error(), "expected auto, normal or application") {
		t.Errorf("appCursor(vt52): err %v", err)
	}
}
