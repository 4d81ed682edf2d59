//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestOutputRangeNumberSpellings: OUTPUT's from and to take a whole
// number in any JSON spelling, as timeout_ms does: -3.0 (what a client's
// floats give) and -3e0 read as -3, and numbers beyond 64 bits are clamped
// (past every line). They were refused ("must be an integer or \"-\"").
// A fraction is still refused.
func TestOutputRangeNumberSpellings(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "20x5", "--", "sh", "-c", "seq 1 40; exec cat")
	s.waitText("40")
	read := func(fields string) map[string]any {
		t.Helper()
		return rawCall(t, s.sock, `{"type":"OUTPUT",`+fields+`}`)
	}
	screen := func(fields string) string {
		t.Helper()
		a := read(fields)
		d, ok := a["data"].(map[string]any)
		if !ok {
			t.Fatalf("OUTPUT %s: %v", fields, a)
		}
		return fmt.Sprint(d["screen"])
	}
	for _, c := range []struct{ given, same string }{
		{`"from":-3.0,"to":-1.0`, `"from":-3,"to":-1`},
		{`"from":-3e0,"to":-1E0`, `"from":-3,"to":-1`},
		{`"from":-1e30`, `"from":"-"`},
		{`"from":-99999999999999999999999`, `"from":"-"`},
		{`"from":-3,"to":1e30`, `"from":-3`},
	} {
		if got, want := screen(c.given), screen(c.same); got != want {
			t.Errorf("OUTPUT %s: %q, want what %s gives: %q", c.given, got, c.same, want)
		}
	}
	for _, bad := range []string{`"from":-1.5`, `"to":2.5`} {
		if a := read(bad); a["status"] != "error" || !strings.Contains(fmt.Sprint(a["error"]), "must be an integer") {
			t.Errorf("OUTPUT %s: %v, want an error", bad, a)
		}
	}
}
