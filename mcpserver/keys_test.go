package mcpserver

import (
	"strings"
	"testing"
)

func TestKeyBytes(t *testing.T) {
	tests := []struct {
		keys      []string
		appCursor bool
		want      string
	}{
		{[]string{"Enter"}, false, "\r"},
		{[]string{"enter", "RETURN"}, false, "\r\r"},
		{[]string{"Tab", "ShiftTab", "Escape", "Esc", "Backspace", "Space"}, false, "\t\x1b[Z\x1b\x1b\x7f "},
		{[]string{"Up", "Down", "Right", "Left", "Home", "End"}, false, "\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F"},
		{[]string{"Up", "Down", "Right", "Left", "Home", "End"}, true, "\x1bOA\x1bOB\x1bOC\x1bOD\x1bOH\x1bOF"},
		{[]string{"PageUp", "Page Down", "page_up", "Delete", "Insert"}, false, "\x1b[5~\x1b[6~\x1b[5~\x1b[3~\x1b[2~"},
		{[]string{"F1", "F4", "F5", "F12"}, false, "\x1bOP\x1bOS\x1b[15~\x1b[24~"},
		{[]string{"Ctrl-C", "ctrl+d", "C-a", "^Z", "Control-z"}, false, "\x03\x04\x01\x1a\x1a"},
		{[]string{"Ctrl-[", "Ctrl-\\", "Ctrl-]", "Ctrl-_", "Ctrl-?", "Ctrl-@", "Ctrl-Space"}, false, "\x1b\x1c\x1d\x1f\x7f\x00\x00"},
		{[]string{"Alt-x", "M-b", "Alt-Enter"}, false, "\x1bx\x1bb\x1b\r"},
		{[]string{"Down*3", "Enter"}, false, "\x1b[B\x1b[B\x1b[B\r"},
	}
	for _, tt := range tests {
		got, err := keyBytes(tt.keys, tt.appCursor)
		if err != nil {
			t.Errorf("keyBytes(%q): %v", tt.keys, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("keyBytes(%q, app=%v) = %q, want %q", tt.keys, tt.appCursor, got, tt.want)
		}
	}
}

func TestKeyBytesErrors(t *testing.T) {
	for _, k := range []string{"Hyper-Q", "Ctrl-Up", "F13", "", "Down*0", "Down*999"} {
		_, err := keyBytes([]string{k}, false)
		if err == nil {
			t.Errorf("keyBytes(%q): no error", k)
			continue
		}
		if !strings.Contains(err.Error(), "key") && !strings.Contains(err.Error(), "repeat") {
			t.Errorf("keyBytes(%q): unhelpful error %v", k, err)
		}
	}
}

// The examples of the spec (cli.md) for `input --text`.
func TestParseWait(t *testing.T) {
	good := []struct {
		in   WaitInput
		mode waitMode
	}{
		{WaitInput{}, waitActivity},
		{WaitInput{Exit: true}, waitExit},
		{WaitInput{QuietMs: 100}, waitQuiet},
		{WaitInput{Regex: "x"}, waitRegex},
		{WaitInput{Contains: "x", Line: 2}, waitContains},
		{WaitInput{NotContains: "x"}, waitNotContains},
		{WaitInput{Line: 3}, waitChange},
	}
	for _, tt := range good {
		w, cond, err := parseWait(tt.in)
		if err != nil || w.mode != tt.mode || cond == "" {
			t.Errorf("parseWait(%+v) = mode %v, %q, %v; want mode %v", tt.in, w.mode, cond, err, tt.mode)
		}
		if w.timeout != defaultWaitTimeout {
			t.Errorf("parseWait(%+v): timeout %v", tt.in, w.timeout)
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
	for _, ms := range []int{1 << 30, 9223372036855, 1<<63 - 1} {
		if w, _, _ := parseWait(WaitInput{TimeoutMs: ms}); w.timeout != maxWaitTimeout || !w.clamped {
			t.Errorf("timeout_ms %d not clamped: %v", ms, w.timeout)
		}
		if w, _, _ := parseWait(WaitInput{QuietMs: ms}); w.quietFor != maxWaitTimeout {
			t.Errorf("quiet_ms %d not clamped: %v", ms, w.quietFor)
		}
	}
	if w, _, _ := parseWait(WaitInput{TimeoutMs: 600000}); w.timeout != maxWaitTimeout || w.clamped {
		t.Errorf("timeout_ms at the maximum: %v clamped %v", w.timeout, w.clamped)
	}
}

func TestNumberLines(t *testing.T) {
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
	s, err := parseStarted("Socket: /tmp/interminai-x/socket\nPID: 42\nAuto-generated: true\n")
	if err != nil || s.Socket != "/tmp/interminai-x/socket" || s.PID != 42 || !s.Auto {
		t.Fatalf("parseStarted: %+v, %v", s, err)
	}
	if _, err := parseStarted("garbage"); err == nil {
		t.Fatal("parseStarted(garbage): no error")
	}
}
