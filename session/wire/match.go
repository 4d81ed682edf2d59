//go:build unix

package wire

import "strings"

// Semantics says, for help texts and tool descriptions, what text a
// condition is tested against. MatchText implements it.
const Semantics = `Conditions are tested against plain text (no colour codes): the whole
screen, or one line with a line number. Every line is taken without its
trailing spaces; lines are joined by a single \n (no \r); the screen's
trailing blank lines are dropped and there is no final newline. A regular
expression is Go (RE2) syntax used as given, without an implicit (?m): ^
and $ mean the start of the first line and the end of the last non-blank
line (e.g. '\$ ?$' or '>>> ?$' for a prompt at the bottom); write (?m) to
make them match at every line, e.g. '(?m)^42$' for a line that is exactly
42.`

// MatchText turns the text of an ascii-format OUTPUT answer (one line per
// screen row, each followed by \n, trailing blanks already trimmed by the
// daemon) into the text a condition is tested against, as Semantics says.
// line > 0 means the answer holds that single line.
func MatchText(screen string, line int) string {
	lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimSuffix(l, "\r"), " ")
	}
	if line > 0 {
		return strings.Join(lines, "\n")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
