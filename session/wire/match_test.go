//go:build unix

package wire

import (
	"regexp"
	"testing"
)

func TestMatchText(t *testing.T) {
	for _, tt := range []struct {
		screen string
		line   int
		want   string
	}{
		{"$ echo hi\nhi\n$\n\n\n", 0, "$ echo hi\nhi\n$"},
		{"a  \n\nb\n\n", 0, "a\n\nb"},
		{"\n\n\n", 0, ""},
		{"x\r\n", 0, "x"},
		{"  \n", 3, ""},
		{"last \n", 3, "last"},
	} {
		if got := MatchText(tt.screen, tt.line); got != tt.want {
			t.Errorf("MatchText(%q, %d) = %q, want %q", tt.screen, tt.line, got, tt.want)
		}
	}
}

// The documented examples of Semantics hold on the match text.
func TestSemanticsExamples(t *testing.T) {
	text := MatchText(">>> 6*7\n42\n>>> \n\n\n", 0)
	for re, want := range map[string]bool{
		`>>> ?$`:   true,
		`42$`:      false, // $ is the end of the last non-blank line
		`(?m)^42$`: true,
		`^>>> 6`:   true,
		`\n$`:      false, // no final newline
	} {
		if got := regexp.MustCompile(re).MatchString(text); got != want {
			t.Errorf("/%s/ on %q: %v, want %v", re, text, got, want)
		}
	}
}
