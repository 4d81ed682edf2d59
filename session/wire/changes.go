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

// BudgetCut is the rule of a "max_chars" budget: whole lines are dropped
// from the top until the text of the rest fits in maxChars characters
// (code points, each line that holds text counted with its newline). It
// returns how many lines it dropped and the characters they held. A blank
// line costs nothing: the budget is spent on text, so blank rows below
// the content never push the content itself out, and keeping the bottom
// lines keeps the newest output and, on a shell, the cursor's row.
func BudgetCut(texts []string, maxChars int) (dropped, chars int) {
	total := 0
	for _, t := range texts {
		total += lineCost(t)
	}
	for dropped < len(texts) && total > maxChars {
		c := lineCost(texts[dropped])
		total -= c
		chars += c
		dropped++
	}
	return dropped, chars
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
