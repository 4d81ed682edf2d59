package mcpserver

import (
	"testing"

	"github.com/ptyplex/ptyplex/internal/waitcond"
)

// The examples of the spec (cli.md) for `input --text`.
func TestParseWait(t *testing.T) {
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
	if w, _, _ := parseWait(WaitInput{TimeoutMs: 1 << 30}); w.Timeout != maxWaitTimeout {
		t.Errorf("timeout not capped: %v", w.Timeout)
	}
}

func TestNumberLines(t *testing.T) {
	got := numberLines("a\nb\nc\nd\n", -2)
	want := "-2\ta\n-1\tb\n 1\tc\n 2\td\n"
	if got != want {
		t.Errorf("numberLines = %q, want %q", got, want)
	}
	if got := numberLines("x\n", 12); got != " 12\tx\n" {
		t.Errorf("numberLines one line = %q", got)
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
