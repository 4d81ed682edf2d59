package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ptyplex/ptyplex/session"
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
	var out session.OutputData
	if !call(c.socket, req, &out) {
		return exitFail
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
		return exitOK
	}
	fmt.Print(renderOutput(out, *cursor, number))
	return exitOK
}

// renderOutput applies the cursor and numbering options to an OUTPUT
// answer.
func renderOutput(out session.OutputData, cursor string, number bool) string {
	var b strings.Builder
	if cursor == "print" || cursor == "both" {
		fmt.Fprintf(&b, "Cursor: row %d, col %d\n", out.Cursor.Row+1, out.Cursor.Col+1)
	}
	text := strings.TrimSuffix(out.Screen, "\n")
	if out.Screen == "" {
		return b.String()
	}
	lines := strings.Split(text, "\n")
	nums := lineNumbers(out.From, len(lines))
	width := 1
	for _, n := range nums {
		width = max(width, len(strconv.Itoa(abs(n))))
	}
	for i, line := range lines {
		n := nums[i]
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
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// lineNumbers lists count protocol line numbers starting at from, skipping
// the boundary 0.
func lineNumbers(from, count int) []int {
	nums := make([]int, 0, count)
	for n := from; len(nums) < count; n++ {
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
