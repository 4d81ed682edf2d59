//go:build unix

package wire

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
