//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestStrayArgumentsRefused: a client command that takes no arguments
// besides its flags refuses one (a usage error, as interminai's clap
// parser gives), instead of ignoring it and, with Go's flag package
// stopping there, the flags after it. Parsing fails before any
// connection, so no session is needed.
func TestStrayArgumentsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"status", "--socket", "/nonexistent/s", "extra"},
		{"status", "extra", "--socket", "/nonexistent/s"},
		{"output", "--socket", "/nonexistent/s", "--no-color", "more"},
		{"stop", "--socket", "/nonexistent/s", "now"},
		{"wait", "--socket", "/nonexistent/s", "5"},
		{"kill", "--socket", "/nonexistent/s", "9"},
		{"resize", "--socket", "/nonexistent/s", "--size", "80x24", "x"},
		{"debug", "--socket", "/nonexistent/s", "clear"},
	} {
		r := ptyplex(t, "", args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "unexpected argument") {
			t.Errorf("%v: %v", args, r)
		}
	}
	// Commands with arguments of their own still take them.
	if r := ptyplex(t, "", "input", "--socket", "/nonexistent/s", "--keys", "Enter", "Tab"); r.code != exitFail || !strings.Contains(r.stderr, "No such file") {
		t.Errorf("input with key names: %v", r)
	}
}
