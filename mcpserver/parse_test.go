//go:build unix

package mcpserver

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/ptyplex/ptyplex/internal/session/waitcond"
	"github.com/ptyplex/ptyplex/session/wire"
)

// parseWait: the mode each set of arguments selects, the combinations it
// refuses, and timeouts clamped to the maximum.
func TestParseWait(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   WaitInput
		mode waitcond.Mode
	}{
		{WaitInput{}, waitcond.Activity},
		{WaitInput{Exit: true}, waitcond.Exit},
		{WaitInput{QuietMs: 100}, waitcond.Quiet},
		{WaitInput{Regex: "x"}, waitcond.Regex},
		{WaitInput{Contains: "x", Line: 2}, waitcond.Contains},
		{WaitInput{NotContains: "x"}, waitcond.NotContains},
		{WaitInput{Line: 3}, waitcond.Change},
	}
	for _, tt := range good {
		w, cond, err := parseWait(tt.in)
		if err != nil || w.Mode != tt.mode || cond == "" {
			t.Errorf("parseWait(%+v) = mode %v, %q, %v; want mode %v", tt.in, w.Mode, cond, err, tt.mode)
		}
		if w.Timeout != defaultWaitTimeout {
			t.Errorf("parseWait(%+v): timeout %v", tt.in, w.Timeout)
		}
	}
	bad := []WaitInput{
		{Regex: "("},
		{Regex: "a", Contains: "b"},
		{Exit: true, QuietMs: 10},
		{Exit: true, Contains: "x"},
		{QuietMs: 10, Line: 1},
		{Line: -1},
		{TimeoutMs: -5},
	}
	for _, in := range bad {
		if _, _, err := parseWait(in); err == nil {
			t.Errorf("parseWait(%+v): no error", in)
		}
	}
	// Up to 2^63-1: past 9223372036855 ms the nanoseconds wrap negative
	// unless the count is clamped first.
	for _, ms := range []millis{1 << 30, 9223372036855, 1<<63 - 1} {
		if w, _, _ := parseWait(WaitInput{TimeoutMs: ms}); w.Timeout != maxWaitTimeout || !timeoutClamped(ms) {
			t.Errorf("timeout_ms %d not clamped: %v", ms, w.Timeout)
		}
		if w, _, _ := parseWait(WaitInput{QuietMs: ms}); w.QuietFor != maxWaitTimeout {
			t.Errorf("quiet_ms %d not clamped: %v", ms, w.QuietFor)
		}
	}
	if w, _, _ := parseWait(WaitInput{TimeoutMs: 600000}); w.Timeout != maxWaitTimeout || timeoutClamped(600000) {
		t.Errorf("timeout_ms at the maximum: %v", w.Timeout)
	}
}

func TestNumberLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		screen   string
		from, to int
		want     string
	}{
		{"a\nb\nc\nd\n", -2, 2, "-2\ta\n-1\tb\n 1\tc\n 2\td\n"},
		{"x\n", 12, 12, " 12\tx\n"},
		// The rows come from from/to, with or without a final newline.
		{"a\nb", 1, 2, " 1\ta\n 2\tb\n"},
		{"a\n", 1, 2, " 1\ta\n 2\t\n"},
		{"x\ny", 9, 10, " 09\tx\n 10\ty\n"},
		{"", 3, 2, ""},
	} {
		if got := numberLines(tc.screen, tc.from, tc.to); got != tc.want {
			t.Errorf("numberLines(%q, %d, %d) = %q, want %q", tc.screen, tc.from, tc.to, got, tc.want)
		}
	}
}

func TestParseStarted(t *testing.T) {
	t.Parallel()
	s, err := parseStarted("Socket: /tmp/interminai-x/socket\nPID: 42\nAuto-generated: true\n")
	if err != nil || s.Socket != "/tmp/interminai-x/socket" || s.PID != 42 || !s.Auto {
		t.Fatalf("parseStarted: %+v, %v", s, err)
	}
	if _, err := parseStarted("garbage"); err == nil {
		t.Fatal("parseStarted(garbage): no error")
	}
}

// describe keeps a daemon error answer's code reachable by errors.Is (run
// adds its hint by it) and its text as the daemon sent it.
func TestDescribeKeepsCode(t *testing.T) {
	t.Parallel()
	err := describe("/s", wire.DaemonError{Text: "no marks (OSC 133)", Code: wire.ErrNoShellIntegration})
	if !errors.Is(err, wire.ErrNoShellIntegration) || err.Error() != "session /s: no marks (OSC 133)" {
		t.Errorf("describe: %q, errors.Is %v", err, errors.Is(err, wire.ErrNoShellIntegration))
	}
	if err := describe("/s", wire.DaemonError{Text: "no marks (OSC 133)"}); errors.Is(err, wire.ErrNoShellIntegration) {
		t.Errorf("an answer without a code matched: %q", err)
	}
}

// millis reads any JSON number without a fraction, saturating past what
// an int holds, and refuses fractions.
func TestMillisUnmarshal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]millis{
		"300": 300, "300.0": 300, "3e2": 300, "-1": -1,
		"9223372036854775807": math.MaxInt, "9223372036854775808": math.MaxInt,
		"18446744073709551616": math.MaxInt, "1e20": math.MaxInt, "1e+21": math.MaxInt, "-1e20": math.MinInt,
	} {
		var m millis
		if err := json.Unmarshal([]byte(in), &m); err != nil || m != want {
			t.Errorf("%s: %d, %v; want %d", in, m, err, want)
		}
	}
	for _, in := range []string{"1.5", "1e-3", `"10"`} {
		var m millis
		if err := json.Unmarshal([]byte(in), &m); err == nil {
			t.Errorf("%s: read as %d", in, m)
		}
	}
}
