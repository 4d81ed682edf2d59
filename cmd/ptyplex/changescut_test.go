//go:build unix

package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestSinceReadWhoseRowsAreAllCut: a --since read whose changed rows the
// --max-chars budget cut, every one, said "no rows changed" in its
// header, which tells an agent its copy is current when it is not (the
// cut line after it said otherwise); the header now says they were cut.
func TestSinceReadWhoseRowsAreAllCut(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "40x6", "--", "cat")
	first := s.ok("output", "--changes")
	m := regexp.MustCompile(`token (\S+) @@`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("no token in %q", first)
	}
	s.input(`hello there\r`)
	s.waitFor("the echo and cat's copy", func(scr string) bool { return strings.Count(scr, "hello there") == 2 })
	got := s.ok("output", "--since", m[1], "--max-chars", "1")
	head, _, _ := strings.Cut(got, "\n")
	if strings.Contains(head, "no rows changed") || !strings.Contains(head, "changed rows all cut") || !strings.Contains(got, "@@ cut 2 lines") {
		t.Errorf("since read with every changed row cut:\n%s", got)
	}
}
