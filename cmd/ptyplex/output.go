package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/internal/termfilter"
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

--follow (a ptyplex addition) prints the screen (with the options above)
each time it changes, until the program exits, then exits 0: for logs and
CI. Screens are separated by a "----" line, or repainted in place when
stdout is a terminal. Waking is event-driven; a burst of output may be
shown as one screen. --follow --lines prints lines instead, as they scroll
off the screen into the scrollback (starting with the scrollback that
exists), and once the program has exited the final screen without its
trailing blank lines: the program's output as a log. Lines that never
scroll (a full-screen program redrawing in place) appear only in the final
screen; when more lines scroll by than the scrollback holds (--scrollback)
between two wake-ups, the oldest of them are lost.`

func runOutput(args []string) int {
	c := newCLI("output", "ptyplex output --socket PATH [--color|--no-color] [--cursor none|print|inverse|both] [-n|--number] [--from N|-] [--to N] [--json] [--follow [--lines]]", outputAbout, true)
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
	format := c.fs.String("format", "", "older form: `ascii` (as --no-color), ansi (as --color) or json (as ascii)")
	follow := c.fs.Bool("follow", false, "print the screen each time it changes, until the program exits")
	lines := c.fs.Bool("lines", false, "with --follow: print lines as they scroll off the screen, then the final screen")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
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
	if *lines && !*follow {
		return c.usageError("--lines goes with --follow")
	}
	if *follow {
		if *asJSON {
			return c.usageError("--follow and --json cannot be combined")
		}
		f := &follower{socket: c.socket, req: req, cursor: *cursor, number: number, clear: isTerminal(os.Stdout)}
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
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Println(string(termfilter.EscapeBidiJSON(b)))
		return exitOK
	}
	fmt.Print(renderOutput(out, *cursor, number))
	return exitOK
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
