//go:build unix

package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/standin"
	"github.com/ptyplex/ptyplex/session/wire"
)

// puppet starts a session whose program prints, through printf, each line
// it is sent, so a test draws with escape sequences typed as text.
func puppet(t *testing.T, size string) *sess {
	t.Helper()
	s := start(t, "--size", size, "--", "sh", "-c",
		`stty -echo; printf 'ready\n'; while IFS= read -r l; do printf "$l"; done`)
	s.waitText("ready")
	return s
}

// draw sends one printf line and waits until the plain screen holds want.
// Its backslashes are doubled because input --text unescapes them.
func (s *sess) draw(printf, want string) {
	s.t.Helper()
	s.input(strings.ReplaceAll(printf, `\`, `\\`) + `\r`)
	s.waitText(want)
}

var tokenRE = regexp.MustCompile(`token ([0-9a-f]{8}\.[0-9]+) @@`)

// token is the token in the header of a --changes answer.
func token(t *testing.T, out string) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no token in:\n%s", out)
	}
	return m[1]
}

func TestOutputChangesOneRow(t *testing.T) {
	t.Parallel()
	s := puppet(t, "40x6")
	s.draw(`\033[2J\033[Ha\nb\nc\nd`, "d")
	full := s.ok("output", "--changes")
	tok := token(t, full)
	want := "@@ screen 40x6, lines 1..6, cursor 4:2, token " + tok + " @@\n1: a\n2: b\n3: c\n4: d\n5..6: (blank)\n"
	if full != want {
		t.Fatalf("full read:\n%s\nwant:\n%s", full, want)
	}
	s.draw(`\033[3;1Hchanged`, "changed")
	ch := s.ok("output", "--since", tok)
	tok2 := token(t, ch)
	if want := "@@ rows 3 changed, cursor 3:8, token " + tok2 + " @@\n3: changed\n"; ch != want {
		t.Errorf("one row changed:\n%s\nwant:\n%s", ch, want)
	}
	same := s.ok("output", "--since", tok2)
	if want := "@@ unchanged, cursor 3:8, token " + token(t, same) + " @@\n"; same != want {
		t.Errorf("nothing changed:\n%s\nwant:\n%s", same, want)
	}
	// --json prints the daemon's answer: the row and its number.
	var ans wire.OutputData
	if err := json.Unmarshal([]byte(s.ok("output", "--since", tok, "--json")), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Changed) != 1 || ans.Changed[0] != (wire.Line{N: 3, Text: "changed"}) || ans.Since != tok || ans.Token == "" {
		t.Errorf("--json: %+v", ans)
	}
}

func TestOutputChangesScroll(t *testing.T) {
	t.Parallel()
	s := puppet(t, "40x5")
	s.draw(`\033[2J\033[Hl1\nl2\nl3\nl4\nl5`, "l5")
	tok := token(t, s.ok("output", "--changes"))
	s.draw(`\nl6\nl7`, "l7")
	ch := s.ok("output", "--since", tok)
	want := "@@ scrolled 2, rows 4..5 changed, cursor 5:3, token " + token(t, ch) + " @@\n" +
		"4: l6\n5: l7\n"
	if ch != want {
		t.Errorf("scrolled by two:\n%s\nwant:\n%s", ch, want)
	}
}

func TestOutputChangesBadTokens(t *testing.T) {
	t.Parallel()
	s := puppet(t, "40x4")
	other := puppet(t, "40x4")
	foreign := token(t, other.ok("output", "--changes"))
	mine := token(t, s.ok("output", "--changes"))
	for _, c := range []struct{ tok, want string }{
		{"nonsense", "is not an OUTPUT token"},
		{foreign, "not issued by this session"},
	} {
		r := s.run("output", "--since", c.tok)
		if r.code != exitFail || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("--since %s: %v", c.tok, r)
		}
	}
	last := mine
	for range 32 {
		last = token(t, s.ok("output", "--since", last))
	}
	r := s.run("output", "--since", mine)
	if r.code != exitFail || !strings.Contains(r.stderr, "Expired token") || r.stdout != "" {
		t.Errorf("an evicted token: %v", r)
	}
	for _, bad := range [][]string{
		{"--changes", "-n"}, {"--since", last, "--cursor", "print"}, {"--max-chars", "0"},
		{"--max-chars", "-3"}, {"--changes", "--follow"},
	} {
		if r := s.run(append([]string{"output"}, bad...)...); r.code != exitUsage {
			t.Errorf("output %v: %v", bad, r)
		}
	}
}

func TestOutputBudget(t *testing.T) {
	t.Parallel()
	s := puppet(t, "40x5")
	s.draw(`\033[2J\033[H1111\n2222\n3333\n4444\n5555`, "5555")
	got := s.ok("output", "--no-color", "--max-chars", "12")
	want := "@@ cut 3 lines (1..3, 15 chars) to fit --max-chars 12; the rest: --from 1 --to 3 @@\n4444\n5555\n"
	if got != want {
		t.Errorf("plain read under a budget:\n%s\nwant:\n%s", got, want)
	}
	// --cursor print: the Cursor line first, as the spec has it, then
	// the cut line.
	if got, want := s.ok("output", "--no-color", "--max-chars", "12", "--cursor", "print"), "Cursor: row 5, col 5\n"+want; got != want {
		t.Errorf("--cursor print under a budget:\n%s\nwant:\n%s", got, want)
	}
	if rest := s.ok("output", "--no-color", "--from", "1", "--to", "3"); rest != "1111\n2222\n3333\n" {
		t.Errorf("the rest: %q", rest)
	}
	// With a range and numbering.
	if got := s.ok("output", "--no-color", "--max-chars", "6", "--from", "2", "--to", "4", "-n"); got !=
		"@@ cut 2 lines (2..3, 10 chars) to fit --max-chars 6; the rest: --from 2 --to 3 @@\n 4\t4444\n" {
		t.Errorf("budget with a range:\n%s", got)
	}
	// A changes read under a budget: the cut rows come with the next read.
	ch := s.ok("output", "--changes", "--max-chars", "10")
	if !strings.Contains(ch, "@@ cut 3 lines (1..3, 15 chars)") || !strings.HasSuffix(ch, "4: 4444\n5: 5555\n") {
		t.Errorf("changes read under a budget:\n%s", ch)
	}
	next := s.ok("output", "--since", token(t, ch), "--max-chars", "10")
	if !strings.Contains(next, "rows 2..3 changed") || !strings.HasSuffix(next, "2: 2222\n3: 3333\n") || !strings.Contains(next, "repeats cut screen rows") {
		t.Errorf("the next read brings the cut rows:\n%s", next)
	}
}

// TestOutputBudgetKeepsText: a budget is spent on text, never on the blank
// rows under it: on a 40x10 screen holding two lines, a budget that fits
// one keeps the second (the newest, beside the cursor) and sends no blank
// rows, plain or as a changes read.
func TestOutputBudgetKeepsText(t *testing.T) {
	s := puppet(t, "40x10")
	s.draw(`\033[2J\033[Hfirst line of text\nsecond line here`, "second line here")
	want := "@@ cut 1 line (1, 19 chars) to fit --max-chars 20; the rest: --from 1 --to 1 @@\nsecond line here\n"
	if got := s.ok("output", "--no-color", "--max-chars", "20"); got != want {
		t.Errorf("plain read under a budget:\n%q\nwant:\n%q", got, want)
	}
	ch := s.ok("output", "--changes", "--max-chars", "18")
	if !strings.HasSuffix(ch, "\n2: second line here\n") || strings.Contains(ch, "blank") {
		t.Errorf("changes read under a budget:\n%s", ch)
	}
	// A changes read after the text was cleared: the blank rows are
	// changes, but they cost nothing, so the new text stays.
	s.draw(`\033[2J\033[Hnew text`, "new text")
	next := s.ok("output", "--since", token(t, ch), "--max-chars", "9")
	if !strings.Contains(next, "\n1: new text\n") {
		t.Errorf("changes under a budget dropped the text:\n%s", next)
	}
}

// TestOutputBudgetKeepsCursorRows: with the cursor above the last text
// (an editor's or a pager's screen), a budget keeps the rows around the
// cursor and cuts the farthest on both sides, saying so above and below
// the lines it sent; a changes read marks only the rows it sent as known,
// so the next read brings the rows cut below.
func TestOutputBudgetKeepsCursorRows(t *testing.T) {
	s := puppet(t, "40x10")
	s.draw(`\033[2J\033[Hline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nstatus bar`, "status bar")
	s.draw(`\033[3;1Hline 3 HERE`, "line 3 HERE") // the cursor ends on row 3
	top := "@@ cut 1 line (1, 7 chars) to fit --max-chars 30; the rest: --from 1 --to 1 @@\n"
	below := "@@ cut 6 lines below (5..10, 46 chars) to fit --max-chars 30; the rest: --from 5 --to 10 @@\n"
	if got, want := s.ok("output", "--no-color", "--max-chars", "30"), top+"line 2\nline 3 HERE\nline 4\n"+below; got != want {
		t.Errorf("plain read under a budget:\n%s\nwant:\n%s", got, want)
	}
	ch := s.ok("output", "--changes", "--max-chars", "30")
	if !strings.Contains(ch, "\n2: line 2\n3: line 3 HERE\n4: line 4\n@@ cut 6 lines below (5..10, 46 chars)") || strings.Contains(ch, "status bar") {
		t.Errorf("changes read under a budget:\n%s", ch)
	}
	next := s.ok("output", "--since", token(t, ch))
	if !strings.Contains(next, "\n5: line 5\n") || !strings.Contains(next, "\n10: status bar\n") || strings.Contains(next, "line 2") {
		t.Errorf("the next read brings the rows cut below, not those sent:\n%s", next)
	}
}

// A daemon that does not know changes reads answers a whole screen; the
// CLI must not print it as "only what changed".
func TestOutputChangesAgainstOlderDaemon(t *testing.T) {
	t.Parallel()
	d := standin.Start(t, "$ ls", "file", "")
	for _, args := range [][]string{{"--changes"}, {"--since", "0a0b0c0d.1"}} {
		r := ptyplex(t, "", append([]string{"output", "--socket", d.Socket}, args...)...)
		if r.code != exitFail || r.stdout != "" || !strings.Contains(r.stderr, "does not support changes reads") {
			t.Errorf("output %v against a daemon without them: %v", args, r)
		}
	}
	// It ignores max_chars too: the CLI cuts by the same rule.
	r := ptyplex(t, "", "output", "--socket", d.Socket, "--no-color", "--max-chars", "6")
	if want := "@@ cut 1 line (1, 5 chars) to fit --max-chars 6; the rest: --from 1 --to 1 @@\nfile\n"; r.code != 0 || r.stdout != want {
		t.Errorf("--max-chars against a daemon without it: %v", r)
	}
}

// A changes read with a range reports only the changed rows inside it,
// and its token counts the rows outside as not given: the next read
// without a range sends them.
func TestOutputChangesWithRange(t *testing.T) {
	t.Parallel()
	s := puppet(t, "40x6")
	s.draw(`\033[2J\033[Ha\nb\nc\nd\ne`, "e")
	tok := token(t, s.ok("output", "--changes"))
	s.draw(`\033[2;1HB\033[5;1HE`, "E")
	ch := s.ok("output", "--since", tok, "--from", "1", "--to", "3")
	if !strings.Contains(ch, "\n2: B\n") || strings.Contains(ch, "\n5:") {
		t.Fatalf("--since --from 1 --to 3: want row 2 only:\n%s", ch)
	}
	ch2 := s.ok("output", "--since", token(t, ch))
	if !strings.Contains(ch2, "\n5: E\n") || strings.Contains(ch2, "2: B") {
		t.Fatalf("the next read without a range: want row 5 (outside the last range) and not row 2:\n%s", ch2)
	}
	// --from 5 --to 5 on the first token: row 5 alone.
	if ch := s.ok("output", "--since", tok, "--from", "5", "--to", "5"); !strings.Contains(ch, "\n5: E\n") || strings.Contains(ch, "\n2:") {
		t.Fatalf("--since --from 5 --to 5:\n%s", ch)
	}
}
