//go:build unix

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/internal/session/changetext"
	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("output", "print the screen (and scrollback) as text", runOutput)
}

const outputAbout = `
Prints the terminal screen. Colour is the default (ANSI escapes, "format":
"ansi" on the wire); --no-color prints plain text.

Lines are numbered as in the protocol: 1..rows are screen lines, -1 is the
scrollback line nearest the screen, -N further back; 0 is the boundary.
--from and --to select a range (inclusive): --from -100 adds the last 100
scrollback lines, --from - starts at the oldest, --to 0 stops at the
boundary (scrollback only).

--cursor print first prints "Cursor: row R, col C" (1-based); inverse
wraps the character under the cursor in ESC[7m ... ESC[27m; both does both.
-n/--number prefixes each line with its number, zero-padded, and a tab.
--json (a ptyplex addition) prints the daemon's OUTPUT answer as JSON.

The bidirectional text controls (U+202A..U+202E, U+2066..U+2069), which
would make your terminal show the text in another order than it has, are
printed escaped, as <U+202E>; in --json they are \u202e escapes, which
decode to the exact text.

Reading a long session (agents, start here): --changes prints the screen
in a compact numbered form whose header ends with a token; pass it back as
--since TOKEN and the next read prints only what changed since: the rows
that differ (with their numbers), the lines that scrolled off that you did
not have (negative numbers), and the cursor, or "unchanged". Each read
prints a new token; the session keeps the last 32. Apply it to your copy:
shift up by "scrolled N" (your top N rows become scrollback), move rows as
"rows A..B moved to C..D" says (vim deleting a line), then replace the rows
listed; a "redraw" header means every row follows. A token that expired or
is another session's is an error: read with --changes again. Use
--changes/--since after each action rather than rereading the whole
screen; it costs what changed.

  @@ rows 3..4 changed, cursor 4:7, token 5c1e09a2.8 @@
  3: $ make
  4: ok

--max-chars N bounds a read (plain or --changes): whole lines are cut,
those farthest from the cursor's row first (the top on a shell, whose
cursor is under its newest output; on an editor or a pager also lines under
the cursor), and a "@@ cut ... @@" line says which and how many characters
("@@ cut ... below ... @@" after the text for lines under it); "--from A
--to B" as printed there gets them. With --cursor print the Cursor line
still comes first. Blank lines
cost nothing and the blank rows under the last text are not printed. N
counts the lines' own text only (code points, each line with its newline): the header
line, the cut line and line-number prefixes (--number, a changes read's
"N: ") come on top, about 60 to 150 characters.

--follow (a ptyplex addition) prints the screen (with the options above)
each time it changes, until the program exits, then exits 0: for logs and
CI. Screens are separated by a "----" line, or repainted in place when
stdout is a terminal. Waking is event-driven; a burst of output may be
shown as one screen. --follow --lines prints lines instead, as they scroll
off the screen into the scrollback (starting with the scrollback that
exists), and once the program has exited the final screen without its
trailing blank lines: the program's output as a log. Lines that never
scroll (a full-screen program redrawing in place) appear only in the final
screen; when more lines scroll by than the scrollback holds (start
--scrollback N) between two reads, the oldest of them are lost, and a line
"@@ ptyplex output: N lines here had already left the scrollback ... @@"
stands where they are missing (stderr repeats it), as run marks the lines
it lost. A session stopped meanwhile (ptyplex stop) ends the program too:
--follow then ends as on its exit, with exit 0, the screen as it last read
it taking the final screen's place (stderr says so).`

func runOutput(args []string) int {
	c := newCLI("output", "ptyplex output --socket PATH [--color|--no-color] [--cursor none|print|inverse|both] [-n|--number] [--from N|-] [--to N] [--changes|--since TOKEN] [--max-chars N] [--json] [--follow [--lines]] [--png FILE]", outputAbout+outputPNGAbout, true)
	color := c.fs.Bool("color", true, "keep colours and attributes (ANSI escapes); the default")
	noColor := c.fs.Bool("no-color", false, "plain text without escapes")
	cursor := c.fs.String("cursor", "none", "show the cursor: none, print, inverse or both")
	var number bool
	c.fs.BoolVar(&number, "number", false, "prefix lines with their line number and a tab")
	c.fs.BoolVar(&number, "n", false, "same as --number")
	from := c.fs.String("from", "", "first `line` (negative: scrollback; -: oldest scrollback line)")
	to := c.fs.String("to", "", "last `line` (0: scrollback only)")
	asJSON := c.fs.Bool("json", false, "print the raw OUTPUT answer as JSON")
	// interminai's older --format: ascii (plain), ansi, or json (which
	// it answered as ascii).
	format := c.fs.String("format", "", "older form of the colour choice, `FORMAT`: ascii (as --no-color), ansi (as --color) or json (as ascii)")
	follow := c.fs.Bool("follow", false, "print the screen each time it changes, until the program exits")
	lines := c.fs.Bool("lines", false, "with --follow: print lines as they scroll off the screen, then the final screen")
	png := addPNGFlag(c.fs)
	changes := c.fs.Bool("changes", false, "print the compact numbered form with a token for --since (plain text unless --color is given)")
	since := c.fs.String("since", "", "print only what changed since the read that printed this `token` (implies --changes)")
	maxChars := c.fs.Int("max-chars", 0, "print at most `N` characters of lines, cutting those farthest from the cursor (the top on a shell), and say what was cut")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	if *png != "" && (*changes || *since != "" || *maxChars != 0) {
		return c.usageError("--png writes the whole screen as an image: --changes, --since and --max-chars do not apply")
	}
	if *png != "" {
		return runOutputPNG(c, *png)
	}
	switch *cursor {
	case "none", "print", "inverse", "both":
	default:
		return c.usageError("invalid --cursor %q: expected none, print, inverse or both", *cursor)
	}
	req := map[string]any{"type": "OUTPUT", "format": "ascii"}
	if *color && !*noColor {
		req["format"] = "ansi"
	}
	switch *format {
	case "":
	case "ascii", "json":
		req["format"] = "ascii"
	case "ansi":
		req["format"] = "ansi"
	default:
		return c.usageError("invalid --format %q: expected ascii, ansi or json", *format)
	}
	if *from != "" {
		if *from == "-" {
			req["from"] = "-"
		} else if n, err := strconv.Atoi(*from); err == nil {
			req["from"] = n
		} else {
			return c.usageError("invalid --from %q: expected a line number or -", *from)
		}
	}
	if *to != "" {
		n, err := strconv.Atoi(*to)
		if err != nil {
			return c.usageError("invalid --to %q: expected a line number", *to)
		}
		req["to"] = n
	}
	if *since != "" {
		*changes = true
		req["since"] = *since
	}
	if *changes {
		req["changes"] = true
		if !flagSet(c.fs, "color") && *format != "ansi" {
			req["format"] = "ascii"
		}
		if number || *cursor != "none" {
			return c.usageError("--changes numbers the lines and prints the cursor in its header: -n and --cursor do not apply")
		}
	}
	if *maxChars < 0 || flagSet(c.fs, "max-chars") && *maxChars == 0 {
		return c.usageError("invalid --max-chars %d: expected a positive number of characters", *maxChars)
	}
	if *maxChars > 0 {
		req["max_chars"] = *maxChars
	}
	if *follow && (*changes || *maxChars > 0) {
		return c.usageError("--follow prints whole screens: --changes, --since and --max-chars do not apply")
	}
	if *lines && !*follow {
		return c.usageError("--lines goes with --follow")
	}
	if *follow {
		if *asJSON {
			return c.usageError("--follow and --json cannot be combined")
		}
		f := &follower{socket: c.socket, req: req, cursor: *cursor, number: number, clear: ptyhost.IsTerminal(os.Stdout)}
		if *lines {
			if *from != "" || *to != "" || number || *cursor != "none" {
				return c.usageError("--follow --lines prints whole lines: --from, --to, -n and --cursor do not apply")
			}
			return f.lines()
		}
		return f.screens()
	}
	var ans outputAnswer
	if !call(c.socket, req, &ans) {
		return exitFail
	}
	out := ans.resolved()
	changetext.EnforceBudget(&out, *maxChars) // for a daemon that ignored max_chars
	if *changes && !ans.answersChanges(*since != "") {
		// A daemon that does not know the request would have answered a
		// full screen, which must not pass for "only this changed".
		fmt.Fprintln(os.Stderr, "Error: the daemon does not support changes reads (its answer has no token); read without --changes and --since")
		return exitFail
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Println(string(termfilter.EscapeBidiJSON(b)))
		return exitOK
	}
	hints := changetext.Hints{
		Range:  func(a, b int) string { return fmt.Sprintf("--from %d --to %d", a, b) },
		Budget: fmt.Sprintf("--max-chars %d", *maxChars),
		Next:   "the next --since read",
	}
	if *changes {
		// The changed rows are screen text too: bidi controls escaped.
		fmt.Print(termfilter.EscapeBidi(changetext.Render(out, hints)))
		return exitOK
	}
	fmt.Print(renderRead(out, *cursor, number, hints))
	return exitOK
}

// renderRead is a plain read as printed: the cursor line first (as
// --cursor print promises), then the note of the lines cut above, the
// lines, and the note of those cut below.
func renderRead(out wire.OutputData, cursor string, number bool, hints changetext.Hints) string {
	var b strings.Builder
	text := renderOutput(out, cursor, number)
	if cursor == "print" || cursor == "both" {
		first, rest, _ := strings.Cut(text, "\n")
		b.WriteString(first + "\n")
		text = rest
	}
	if out.Cut != nil {
		b.WriteString(changetext.CutNote(*out.Cut, hints, false) + "\n")
	}
	b.WriteString(text)
	if out.CutBelow != nil {
		b.WriteString(changetext.CutBelowNote(*out.CutBelow, hints, false) + "\n")
	}
	return b.String()
}

// answersChanges reports whether the daemon understood a changes read.
func (a outputAnswer) answersChanges(since bool) bool {
	return a.Token != "" && (!since || a.Since != "")
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// renderOutput applies the cursor and numbering options to an OUTPUT
// answer. The rows come from the answer's from/to, not from counting
// newlines: daemons differ in whether the last row ends with one, and a
// blank last row would otherwise be lost or invented.
func renderOutput(out wire.OutputData, cursor string, number bool) string {
	var b strings.Builder
	if cursor == "print" || cursor == "both" {
		fmt.Fprintf(&b, "Cursor: row %d, col %d\n", out.Cursor.Row+1, out.Cursor.Col+1)
	}
	nums := lineNumbers(out.From, out.To)
	lines := strings.Split(out.Screen, "\n")
	width := max(1, len(strconv.Itoa(abs(out.From))), len(strconv.Itoa(abs(out.To))))
	for i, n := range nums {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		if (cursor == "inverse" || cursor == "both") && n == out.Cursor.Row+1 {
			line = markCursor(line, out.Cursor.Col)
		}
		if number {
			sign := " "
			if n < 0 {
				sign = "-"
			}
			fmt.Fprintf(&b, "%s%0*d\t", sign, width, abs(n))
		}
		// After markCursor, which counts the cells the line holds: an
		// escaped bidi control takes cells that the screen never had.
		b.WriteString(termfilter.EscapeBidi(line))
		b.WriteByte('\n')
	}
	return b.String()
}

// outputAnswer is an OUTPUT answer that tells whether the daemon reported
// the range: the original protocol's answers may lack from and to.
type outputAnswer struct {
	wire.OutputData
	From *int `json:"from"`
	To   *int `json:"to"`
}

// resolved fills in the range of an answer that did not report one: the
// whole screen by its size, or, lacking even that, as many lines as the
// text holds from line 1.
func (a outputAnswer) resolved() wire.OutputData {
	out := a.OutputData
	switch {
	case a.From != nil && a.To != nil:
		out.From, out.To = *a.From, *a.To
	case a.Size.Rows > 0:
		out.From, out.To = 1, a.Size.Rows
	default:
		out.From, out.To = 1, strings.Count(strings.TrimSuffix(out.Screen, "\n"), "\n")+1
		if out.Screen == "" {
			out.To = 0
		}
	}
	return out
}

// lineNumbers lists the protocol line numbers from..to, skipping the
// boundary 0; from > to is the empty range.
func lineNumbers(from, to int) []int {
	var nums []int
	for n := from; n <= to; n++ {
		if n != 0 {
			nums = append(nums, n)
		}
	}
	return nums
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
