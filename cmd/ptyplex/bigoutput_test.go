//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// An answer may be longer than the 10 MB a request may be: here the
// scrollback of a wide screen, 2,700 lines of 4,000 columns. interminai's
// client reads it; ours cut it at 10 MB and failed with "bad response
// ... unexpected end of JSON input".
func TestOutputAnswerOverTenMB(t *testing.T) {
	t.Parallel()
	const cols, lines = 4000, 2700
	prog := fmt.Sprintf(`awk 'BEGIN { s = sprintf("%%%ds", ""); gsub(/ /, "x", s); for (i = 0; i < %d; i++) print s; print "DONE" }'; exec cat`, cols, lines)
	s := start(t, "--size", fmt.Sprintf("%dx10", cols), "--", "sh", "-c", prog)
	s.waitText("DONE")
	r := s.run("output", "--no-color", "--from", "-")
	if r.code != 0 {
		t.Fatalf("output of %d lines of %d columns: exit %d: %s", lines, cols, r.code, r.stderr)
	}
	full := strings.Repeat("x", cols)
	got := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	n := 0
	for _, l := range got {
		if l == full {
			n++
		}
	}
	if n != lines || len(r.stdout) <= 10<<20 {
		t.Fatalf("output: %d bytes, %d full lines of %d, want %d", len(r.stdout), n, len(got), lines)
	}
}
