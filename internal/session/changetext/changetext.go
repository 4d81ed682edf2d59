//go:build unix

// Package changetext renders OUTPUT answers of changes reads in the compact
// form agents read: one header line in @@ ... @@ that says what the answer
// is (the cursor 1-based as row:col, the token for the next read), then
// "N: text" per line, with runs of blank lines folded into
// "A..B: (blank)". The CLI and the MCP server print the same form, each
// naming its own flags or arguments in the hints.
package changetext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/session/wire"
)

// Hints name a client's ways of asking for what a budget cut.
type Hints struct {
	// Range is how to read lines from..to: "--from 1 --to 3".
	Range func(from, to int) string
	// Budget names the budget that was applied: "--max-chars 12".
	Budget string
	// Next names the next changes read: "the next --since read".
	Next string
}

// Render renders a changes read (an answer to "since") or, when
// out.Since is empty, a full read that started a chain.
func Render(out wire.OutputData, h Hints) string {
	var head []string
	var body []wire.Line
	if out.Since == "" {
		head = append(head, fmt.Sprintf("screen %dx%d", out.Size.Cols, out.Size.Rows))
		if out.From <= out.To {
			head = append(head, "lines "+span(out.From, out.To))
		} else {
			head = append(head, "no lines")
		}
		body = screenLines(out)
	} else {
		body = out.Changed
		if out.Unchanged {
			head = append(head, "unchanged")
		}
		if out.Redraw != "" {
			head = append(head, fmt.Sprintf("redraw (%s): every row follows", redrawWhy(out.Redraw)))
		}
		if out.Scrolled > 0 {
			// "scrolled N": the client's top N rows are now scrollback
			// -N..-1 (the help says so); the lines it lacked follow.
			s := fmt.Sprintf("scrolled %d", out.Scrolled)
			if out.ScrollbackLost > 0 {
				s += fmt.Sprintf(", %d of them no longer in the scrollback", out.ScrollbackLost)
			}
			head = append(head, s)
		}
		for _, m := range out.Moved {
			head = append(head, fmt.Sprintf("rows %s moved to %s", span(m.From, m.From+m.Rows-1), span(m.To, m.To+m.Rows-1)))
		}
		if out.ScrollbackCleared {
			head = append(head, "scrollback cleared")
		}
		if !out.Unchanged && out.Redraw == "" {
			switch rows := changedRows(out.Changed); {
			case rows != "":
				head = append(head, "rows "+rows+" changed")
			case out.Cut != nil || out.CutBelow != nil:
				// Rows did change, but the budget cut every one: "no rows
				// changed" would tell the client its copy is current.
				head = append(head, "changed rows all cut")
			case len(out.Moved) == 0:
				head = append(head, "no rows changed")
			}
		}
	}
	head = append(head, fmt.Sprintf("cursor %d:%d", out.Cursor.Row+1, out.Cursor.Col+1))
	if out.Token != "" {
		head = append(head, "token "+out.Token)
	}
	var b strings.Builder
	b.WriteString("@@ " + strings.Join(head, ", ") + " @@\n")
	if out.Cut != nil {
		b.WriteString(CutNote(*out.Cut, h, out.Since != "") + "\n")
	}
	writeLines(&b, body)
	if out.CutBelow != nil {
		b.WriteString(CutBelowNote(*out.CutBelow, h, out.Since != "") + "\n")
	}
	return b.String()
}

func redrawWhy(r string) string {
	switch r {
	case "resize":
		return "the size changed"
	case "format":
		return "the token was for the other colour format"
	case "screen":
		return "the program switched between the main and alternate screen"
	}
	return r
}

// CutNote says what a budget left out and how to get it; changes says
// the answer was a changes read, whose successor repeats cut screen rows.
func CutNote(c wire.Cut, h Hints, changes bool) string {
	return cutNote(c, h, changes, "")
}

// CutBelowNote is CutNote for the lines a budget left out under the ones
// it kept (those farther below the cursor than the kept rows are above
// it); it goes after the lines.
func CutBelowNote(c wire.Cut, h Hints, changes bool) string {
	return cutNote(c, h, changes, " below")
}

func cutNote(c wire.Cut, h Hints, changes bool, where string) string {
	lines := "lines"
	if c.Lines == 1 {
		lines = "line"
	}
	s := fmt.Sprintf("@@ cut %d %s%s (%s, %d chars) to fit %s; the rest: %s",
		c.Lines, lines, where, span(c.From, c.To), c.Chars, h.Budget, h.Range(c.From, c.To))
	if changes {
		s += ", or " + h.Next + ", which repeats cut screen rows"
	}
	return s + " @@"
}

// screenLines numbers the rows of a plain answer.
func screenLines(out wire.OutputData) []wire.Line {
	texts := strings.Split(out.Screen, "\n")
	var ls []wire.Line
	for i, n := range numbers(out.From, out.To) {
		t := ""
		if i < len(texts) {
			t = texts[i]
		}
		ls = append(ls, wire.Line{N: n, Text: t})
	}
	return ls
}

// writeLines writes "N: text", folding two or more consecutive blank
// lines into one "A..B: (blank)".
func writeLines(b *strings.Builder, ls []wire.Line) {
	for i := 0; i < len(ls); {
		j := i
		for j+1 < len(ls) && ls[i].Text == "" && ls[j+1].Text == "" && next(ls[j].N) == ls[j+1].N {
			j++
		}
		if j > i {
			fmt.Fprintf(b, "%s: (blank)\n", span(ls[i].N, ls[j].N))
		} else {
			fmt.Fprintf(b, "%d: %s\n", ls[i].N, ls[i].Text)
		}
		i = j + 1
	}
}

// next is the line number after n, skipping the boundary 0.
func next(n int) int {
	if n == -1 {
		return 1
	}
	return n + 1
}

// changedRows lists the screen rows among ls compactly: "3..4,7".
func changedRows(ls []wire.Line) string {
	var parts []string
	for i := 0; i < len(ls); {
		if ls[i].N < 1 {
			i++
			continue
		}
		j := i
		for j+1 < len(ls) && ls[j+1].N == ls[j].N+1 {
			j++
		}
		parts = append(parts, span(ls[i].N, ls[j].N))
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func span(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d..%d", a, b)
}

// numbers lists the protocol line numbers from..to, skipping the boundary
// 0; from > to is the empty range.
func numbers(from, to int) []int {
	var nums []int
	for n := from; n <= to; n++ {
		if n != 0 {
			nums = append(nums, n)
		}
	}
	return nums
}
