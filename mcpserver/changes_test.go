//go:build unix

package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/standin"
)

// changes mirrors the output tool's structured result of a read with since.
type changes struct {
	Token     string `json:"token"`
	Since     string `json:"since"`
	Unchanged bool   `json:"unchanged"`
	Scrolled  int    `json:"scrolled"`
	Redraw    string `json:"redraw"`
	Lines     int    `json:"lines"`
	Screen    string `json:"screen"`
	Changed   []struct {
		Line int    `json:"line"`
		Text string `json:"text"`
	} `json:"changed"`
	Cursor struct{ Row, Col int } `json:"cursor"`
	Cut    *struct {
		Lines, Chars, From, To int
	} `json:"cut"`
	CutBelow *struct {
		Lines, Chars, From, To int
	} `json:"cut_below"`
}

func (ch changes) rows() string {
	var b strings.Builder
	for _, l := range ch.Changed {
		fmt.Fprintf(&b, "%d:%s|", l.Line, l.Text)
	}
	return b.String()
}

func TestOutputChangesThroughMCP(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(map[string]any{"size": "60x6"})
	first := ok[changes](c, "output", map[string]any{"session": s.Session})
	if first.Token == "" || first.Since != "" || !strings.HasPrefix(first.Screen, "$") {
		t.Fatalf("a plain read carries a token: %+v", first)
	}
	if res := c.call("output", map[string]any{"session": s.Session}); !strings.Contains(text(res), ", token ") {
		t.Errorf("the text names the token: %s", text(res))
	}

	c.typeLine(s.Session, "echo one-line")
	c.until(s.Session, `(?m)^one-line\n\$ ?$`)
	ch := ok[changes](c, "output", map[string]any{"session": s.Session, "since": first.Token})
	if got := ch.rows(); got != "1:$ echo one-line|2:one-line|3:$|" {
		t.Errorf("changed rows: %s", got)
	}
	if ch.Since != first.Token || ch.Token == "" || ch.Token == first.Token || ch.Cursor.Row != 3 || ch.Cursor.Col != 3 {
		t.Errorf("since answer: %+v", ch)
	}
	res := c.call("output", map[string]any{"session": s.Session, "since": first.Token})
	if txt := text(res); !strings.HasPrefix(txt, "@@ rows 1..3 changed, cursor 3:3, token ") || !strings.Contains(txt, "\n2: one-line\n") {
		t.Errorf("since text:\n%s", txt)
	}

	same := ok[changes](c, "output", map[string]any{"session": s.Session, "since": ch.Token})
	if !same.Unchanged || len(same.Changed) != 0 {
		t.Errorf("nothing happened: %+v", same)
	}
	if txt := text(c.call("output", map[string]any{"session": s.Session, "since": same.Token})); !strings.HasPrefix(txt, "@@ unchanged, cursor 3:3, token ") {
		t.Errorf("unchanged text: %s", txt)
	}

	// Six more lines scroll the 6-row screen by two: the two lines that
	// scrolled off were the client's top rows, so they do not come again. (\\n: the tool's text unescapes \n itself.)
	c.typeLine(s.Session, `printf 'a\\nb\\nc\\nd\\n'`)
	c.until(s.Session, `(?m)^d\n\$ ?$`)
	sc := ok[changes](c, "output", map[string]any{"session": s.Session, "since": same.Token})
	if sc.Scrolled != 2 || sc.rows() != `1:$ printf 'a\nb\nc\nd\n'|2:a|3:b|4:c|5:d|6:$|` {
		t.Errorf("scrolled: %d %s", sc.Scrolled, sc.rows())
	}

	// A budget: the newest lines, and what was cut.
	cut := ok[changes](c, "output", map[string]any{"session": s.Session, "max_chars": 8})
	if cut.Cut == nil || cut.Cut.From != 1 || !strings.HasSuffix(cut.Screen, "d\n$\n") {
		t.Errorf("budget: %+v", cut)
	}
	if txt := text(c.call("output", map[string]any{"session": s.Session, "max_chars": 8})); !strings.Contains(txt, `the rest: {"from":1,"to":`) {
		t.Errorf("budget text: %s", txt)
	}

	c.fails("output", map[string]any{"session": s.Session, "since": "garbage"}, "not an OUTPUT token")
	other := c.shell(nil)
	foreign := ok[changes](c, "output", map[string]any{"session": other.Session}).Token
	c.fails("output", map[string]any{"session": s.Session, "since": foreign}, "not issued by this session")
	c.fails("output", map[string]any{"session": s.Session, "max_chars": 0}, "max_chars")
}

// A daemon that does not know changes reads: a plain read still works
// (without a token) and since is an error, not a whole screen.
func TestOutputChangesAgainstOlderDaemon(t *testing.T) {
	t.Parallel()
	d := standin.Start(t, "$ ls", "file", "")
	c := connect(t)
	if out := ok[changes](c, "output", map[string]any{"session": d.Socket}); out.Token != "" || out.Screen == "" {
		t.Errorf("plain read: %+v", out)
	}
	c.fails("output", map[string]any{"session": d.Socket, "since": "0a0b0c0d.1"}, "does not support since")
}

// since with from/to: only the changed rows inside the range come, and
// the rows outside it come with the next read.
func TestOutputChangesRangeThroughMCP(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(map[string]any{"size": "60x8"})
	c.typeLine(s.Session, "echo A")
	c.until(s.Session, `(?m)^A\n\$ ?$`)
	tok := ok[changes](c, "output", map[string]any{"session": s.Session}).Token
	c.typeLine(s.Session, "echo B")
	c.until(s.Session, `(?m)^B\n\$ ?$`)
	in := ok[changes](c, "output", map[string]any{"session": s.Session, "since": tok, "from": 4, "to": 4})
	if in.rows() != "4:B|" {
		t.Fatalf("since with from 4 to 4: %s", in.rows())
	}
	rest := ok[changes](c, "output", map[string]any{"session": s.Session, "since": in.Token})
	if rest.rows() != "3:$ echo B|5:$|" {
		t.Fatalf("the next read without a range: want rows 3 and 5: %s", rest.rows())
	}
	if txt := text(c.call("output", map[string]any{"session": s.Session, "since": tok, "to": 3})); !strings.Contains(txt, "\n3: $ echo B\n") || strings.Contains(txt, "4: B") {
		t.Fatalf("since with to 3:\n%s", txt)
	}
}

// TestOutputBudgetSpentOnText: max_chars keeps the newest text and sends
// none of the blank rows under it (a 60x24 shell after three commands
// holds a few lines of text and many blank rows).
func TestOutputBudgetSpentOnText(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(map[string]any{"size": "60x24"})
	for _, w := range []string{"alpha", "bravo", "charlie"} {
		c.typeLine(s.Session, "echo "+w)
		c.until(s.Session, `(?m)^`+w+`\n\$ ?$`)
	}
	cut := ok[changes](c, "output", map[string]any{"session": s.Session, "max_chars": 50})
	if cut.Cut == nil || !strings.HasSuffix(cut.Screen, "charlie\n$\n") || strings.Contains(cut.Screen, "\n\n") {
		t.Errorf("max_chars 50 kept %q (cut %+v)", cut.Screen, cut.Cut)
	}
	if txt := text(c.call("output", map[string]any{"session": s.Session, "max_chars": 50})); strings.Contains(txt, "blank") || !strings.Contains(txt, "charlie") {
		t.Errorf("max_chars 50 text:\n%s", txt)
	}
}

// TestOutputBudgetKeepsCursorRows: with the cursor above the last text,
// max_chars keeps the rows around it and cuts the farthest on both sides,
// named in cut and cut_below and in the text above and below the lines.
func TestOutputBudgetKeepsCursorRows(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{"size": "40x10", "command": []string{"sh", "-c",
		`printf '\033[2J\033[Hline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nstatus bar\033[3;1Hline 3 HERE'; exec sleep 600`}})
	c.until(s.Session, `line 3 HERE`)
	args := map[string]any{"session": s.Session, "max_chars": 30}
	cut := ok[changes](c, "output", args)
	if cut.Screen != "line 2\nline 3 HERE\nline 4\n" || cut.Cut == nil || cut.Cut.From != 1 || cut.Cut.To != 1 ||
		cut.CutBelow == nil || cut.CutBelow.From != 5 || cut.CutBelow.To != 10 || cut.CutBelow.Chars != 46 {
		t.Errorf("max_chars 30 kept %q (cut %+v, below %+v)", cut.Screen, cut.Cut, cut.CutBelow)
	}
	if txt := text(c.call("output", args)); !strings.HasSuffix(txt, "line 4\n@@ cut 6 lines below (5..10, 46 chars) to fit max_chars 30; the rest: {\"from\":5,\"to\":10} @@\n") {
		t.Errorf("max_chars 30 text:\n%s", txt)
	}
}
