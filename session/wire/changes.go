//go:build unix

package wire

import (
	"strings"
	"unicode/utf8"
)

// Line is one line of a changes read (OUTPUT with "since"): its protocol
// line number (negative for scrollback) and its text, in the read's format.
type Line struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// Cut says what a "max_chars" budget left out of an OUTPUT answer: the
// first lines of the answer, whole. From and To are the protocol line
// numbers of the first and last line left out, as of this answer; an
// OUTPUT with those as from/to returns them (and a changes read with the
// answer's token returns cut screen rows again by itself).
type Cut struct {
	Lines int `json:"lines"`
	Chars int `json:"chars"`
	From  int `json:"from"`
	To    int `json:"to"`
}

// Move says that screen rows To..To+Rows-1 now hold what the client's copy
// holds at rows From..From+Rows-1 (after shifting it up by the answer's
// "scrolled"): a program deleted, inserted or scrolled lines in place.
// A client applies every move to its copy as it was, then the changed rows.
type Move struct {
	From int `json:"from"`
	To   int `json:"to"`
	Rows int `json:"rows"`
}

// Window is what a budget keeps of a run of lines: it drops Top lines
// from the start (holding TopChars characters) and Bottom lines from the
// end (BottomChars).
type Window struct {
	Top, TopChars       int
	Bottom, BottomChars int
}

// BudgetWindow is the rule of a "max_chars" budget: while the text of
// the lines left (code points, each line that holds text counted with its
// newline) exceeds maxChars, the line farthest from the anchor (the index
// of the cursor's line) is dropped, the top one on a tie. The lines
// nearest the cursor are what a reader of a terminal needs first: on a
// shell the cursor sits under the newest output, so the top goes and the
// newest lines stay; in an editor or a pager the rows around the cursor
// stay and both ends go. Blank lines cost nothing, and lines are kept
// whole: half a row misleads. An anchor past either end counts as the
// nearest end.
func BudgetWindow(texts []string, anchor, maxChars int) Window {
	var w Window
	total := 0
	for _, t := range texts {
		total += lineCost(t)
	}
	anchor = max(0, min(anchor, len(texts)-1))
	lo, hi := 0, len(texts)-1
	for lo <= hi && total > maxChars {
		if hi-anchor > anchor-lo {
			c := lineCost(texts[hi])
			total -= c
			w.Bottom++
			w.BottomChars += c
			hi--
			continue
		}
		c := lineCost(texts[lo])
		total -= c
		w.Top++
		w.TopChars += c
		lo++
	}
	// Blank rows left at either edge of what is kept go with the lines
	// cut beside them, so the answer starts and ends on text and each cut
	// names one range.
	for w.Top > 0 && lo <= hi && Blank(texts[lo]) {
		w.Top++
		lo++
	}
	for w.Bottom > 0 && lo <= hi && Blank(texts[hi]) {
		w.Bottom++
		hi--
	}
	return w
}

// Anchor is the index in nums (line numbers in increasing order) of the
// cursor's row, or of the last line above it; 0 when every line is
// below it.
func Anchor(nums []int, cursorRow int) int {
	a := 0
	for i, n := range nums {
		if n <= cursorRow {
			a = i
		}
	}
	return a
}

// TrailingBlank is how many lines at the end of texts are blank.
func TrailingBlank(texts []string) int {
	n := 0
	for n < len(texts) && Blank(texts[len(texts)-1-n]) {
		n++
	}
	return n
}

// Blank reports whether a line shows nothing: empty, or spaces only.
func Blank(t string) bool { return strings.TrimSpace(t) == "" }

func lineCost(t string) int {
	if Blank(t) {
		return 0
	}
	return utf8.RuneCountInString(t) + 1
}
