//go:build unix

package waitcond

import (
	"regexp"
	"strings"
	"time"
)

// Mode is what a wait waits for.
type Mode int

const (
	Activity    Mode = iota // any output or exit (the activity flag, as interminai)
	Exit                    // the program exits
	Change                  // the watched line (or screen) changes
	Contains                // the line/screen contains Text
	NotContains             // the line/screen no longer contains Text
	Regex                   // the line/screen matches Regex
	Quiet                   // no output for QuietFor
	// Input: the foreground program is blocked reading the terminal and
	// its output is all on the screen, as the daemon reads it from the
	// kernel (WAIT "input"). With AfterGen the program must react to the
	// input first. Against a daemon that cannot tell, it is Quiet with
	// QuietFor (or wire.InputQuietFallback).
	Input
)

// Spec is a validated wait. Exactly one mode applies.
type Spec struct {
	Mode Mode
	Line int // 1-based screen line; 0 = the whole screen
	// PastScreenEmpty reads a Line beyond the screen's last row as an
	// empty line (a resize may bring it), as interminai's CLI does;
	// without it such a line is an OffScreenError.
	PastScreenEmpty bool
	Text            string
	Regex           *regexp.Regexp
	QuietFor        time.Duration
	// Timeout bounds the whole wait; 0 means no bound.
	Timeout time.Duration
	// AfterGen, when set, ties the wait to output read after that output
	// generation (INPUT "with_gen" answers it): a pattern is first tested
	// once such output has arrived, and quiet time counts from the wait's
	// start, with any later output restarting it. Against a daemon that
	// reports no generations (another implementation of the protocol)
	// waits fall back to the activity flag.
	AfterGen *int64
	// Before is the match text just before the input (Snapshot). A condition is then tested only on a text that differs
	// from it: the tail of output that was on its way before the input
	// (the last bytes of a prompt, which leave the text as it was) must not
	// count as the reaction to it.
	Before *string
}

// Outcome is how a wait ended.
type Outcome struct {
	Met      bool   // the condition came true (or output arrived, or exit, per mode)
	Already  bool   // the condition was true before waiting
	TimedOut bool   // the timeout passed first
	Exited   bool   // the program has exited
	ExitCode *int   // set once exited and known
	Match    string // for Regex: the matched text; for Contains: Text; for Change: the new text
	// Detection, for Input: "kernel" when the daemon saw the program
	// blocked reading its terminal, "quiet" when it fell back to a quiet
	// period (its platform cannot tell, or it predates WAIT "input").
	Detection string
	// Rounds counts the screen reads after the first: a measure of how
	// often the wait woke up.
	Rounds int
}

// met tests a pattern condition against match text and returns what
// matched.
func (s Spec) met(text string) (string, bool) {
	switch s.Mode {
	case Contains:
		return s.Text, strings.Contains(text, s.Text)
	case NotContains:
		return "", !strings.Contains(text, s.Text)
	case Regex:
		loc := s.Regex.FindStringIndex(text)
		if loc == nil {
			return "", false
		}
		return text[loc[0]:loc[1]], true
	}
	return "", false
}
