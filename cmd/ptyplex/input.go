//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/internal/cescape"
	"github.com/ptyplex/ptyplex/internal/session/keys"
	"github.com/ptyplex/ptyplex/internal/session/waitcond"
	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("input", "send keys to the program (--text, --keys, --password, or stdin)", runInput)
}

const inputAbout = `
Sends input to the program. --text is unescaped C-style: \n \r \t \b \a \v
\f \e (or \E, ESC) \\ and \xHH; an unknown escape such as \z passes through
unchanged, and a \x without two hex digits after it fails, as in interminai
(write \\x for a backslash and an x). --text wins over stdin. Without
--text, --keys or --password, the bytes of stdin are sent as they are,
invalid UTF-8 included. In --text,
\xHH escapes that spell UTF-8 (\xc3\xa9) send that character; a byte 80..ff
outside any UTF-8 sequence goes as the character U+00HH, as interminai sends
it (pipe the bytes on stdin to send them unchanged).

--text may be given more than once: the texts are sent one after the other
(--text A --text B sends AB). --keys makes the arguments key names, sent
with every --text in one write, in the order of the command line
(--text ihi --keys Escape --text ':wq' Enter types ihi, Escape, :wq, Enter):
` + keys.Help + `
--cursor-keys normal|application overrides the mode the daemon reports.

--password shows the program's prompt (the cursor line and the non-empty
line above it) on stderr, reads a secret from the controlling terminal with
echo disabled (it is never shown and never on the command line), and sends
it followed by \r.

Waiting for the reaction (ptyplex additions): --wait-input, --wait-regex RE,
--wait-contains TEXT or --wait-quiet D waits, after the input is written,
for output the program produced after it: the screen as it was before the
input (an old prompt) is never tested. --wait-quiet D returns once no output
arrived for D after the input. --wait-input returns once the program has
reacted and is blocked reading the terminal again, its output all on the
screen: the right wait for a prompt that may come after pauses ("Waiting
for input"; see 'ptyplex wait --help' for how it is known per platform).
--timeout D bounds the wait (exit 124, as
'wait'). The result is printed as 'wait' prints it ("Condition met on
screen", "Terminal quiet for D", "Application exited" with exit 1).
Matching is the same as in 'wait' (see 'ptyplex wait --help').

Examples:
  ptyplex input --socket S --text 'ihello\e:wq\r'
  ptyplex input --socket S --keys Up Up Enter
  ptyplex input --socket S --text 'print(6*7)' --keys Enter --wait-regex '>>> ?$' --timeout 10s
  ptyplex input --socket S --text 'make test' --keys Enter --wait-input --timeout 10m
  printf 'ls\r' | ptyplex input --socket S
  ptyplex input --socket S --password`

func runInput(args []string) int {
	c := newCLI("input", "ptyplex input --socket PATH [--text TEXT]... [--keys KEY... [--cursor-keys auto|normal|application]] [--password] [--wait-input | --wait-regex RE | --wait-contains TEXT | --wait-quiet D] [--timeout D]", inputAbout, true)
	texts := &textFlags{}
	c.fs.Var(texts, "text", "`TEXT` to send, with C-style escapes (\\n \\r \\t \\e \\xHH ...); repeatable, sent in command-line order")
	password := c.fs.Bool("password", false, "read a secret from the terminal with echo disabled and send it followed by \\r")
	keyMode := c.fs.Bool("keys", false, "the arguments are key names (Enter Up C-c F5 Down*3 ...), sent in command-line order with --text")
	cursorKeys := c.fs.String("cursor-keys", "auto", "arrow/Home/End encoding for --keys: auto (the program's mode), normal or application")
	waitRegex := c.fs.String("wait-regex", "", "after the input, wait until the screen matches `RE`")
	waitContains := c.fs.String("wait-contains", "", "after the input, wait until the screen contains `TEXT`")
	c.fs.Bool("wait-input", false, "after the input, wait until the program reacted and waits for input again")
	waitQuiet := c.durationVar("wait-quiet", "after the input, wait until no output arrived for `DURATION`")
	timeout := c.durationVar("timeout", "give up waiting after `DURATION` (exit 124; 0, the default: no timeout)")
	names, done, code := parseInterleaved(c, args, &texts.names)
	if done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["text"] && *password {
		return c.usageError("--text and --password cannot be used together")
	}
	if *keyMode && *password {
		return c.usageError("--keys and --password cannot be used together")
	}
	if len(names) > 0 && !*keyMode {
		return c.usageError("unexpected arguments %q (key names need --keys)", names)
	}
	if *keyMode && len(names) == 0 {
		return c.usageError("--keys needs at least one key name, e.g. --keys Enter")
	}
	spec, waiting, err := inputWait(set, *waitRegex, *waitContains, *waitQuiet, *timeout)
	if err != nil {
		return c.usageError("%v", err)
	}
	var data []byte
	exact := true // stdin and --password go byte for byte; --text as interminai's \xHH
	switch {
	case set["text"] || *keyMode:
		// Text and keys go in the order of the command line: the key
		// names before a --text are typed before its text.
		exact = false
		from := 0
		for _, seg := range texts.list {
			if *keyMode && seg.at > from {
				kb, ok := encodeKeys(c.socket, names[from:seg.at], *cursorKeys)
				if !ok {
					return exitFail
				}
				data = append(data, kb...)
				from = seg.at
			}
			typed, err := cescape.Unescape(seg.text)
			if err != nil {
				fmt.Fprintf(os.Stderr, "Error: %v\n", err)
				return exitFail
			}
			data = append(data, typed...)
		}
		if *keyMode && from < len(names) {
			kb, ok := encodeKeys(c.socket, names[from:], *cursorKeys)
			if !ok {
				return exitFail
			}
			data = append(data, kb...)
		}
	case *password:
		secret, ok := readPassword(c.socket)
		if !ok {
			return exitFail
		}
		data = append(secret, '\r')
	default:
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error: reading stdin: %v\n", err)
			return exitFail
		}
		data = b
	}
	req := inputRequest(data, exact)
	if !waiting {
		if !call(c.socket, req, nil) {
			return exitFail
		}
		return exitOK
	}
	before, err := waitcond.Snapshot(context.Background(), c.socket, 0)
	if err != nil {
		printError(err)
		return exitFail
	}
	spec.Before = &before
	req["with_gen"] = true
	var in wire.InputData
	if !call(c.socket, req, &in) {
		return exitFail
	}
	spec.AfterGen = &in.OutputGen
	o := waitOpts{socket: c.socket, quietFor: *waitQuiet, timeout: *timeout}
	return o.report(spec, exitFail)
}

// inputWait builds the wait that follows the input, if any was asked for.
func inputWait(set map[string]bool, re, contains string, quiet, timeout time.Duration) (waitcond.Spec, bool, error) {
	var sp waitcond.Spec
	n := 0
	for _, f := range []string{"wait-input", "wait-regex", "wait-contains", "wait-quiet"} {
		if set[f] {
			n++
		}
	}
	switch {
	case n > 1:
		return sp, false, fmt.Errorf("--wait-input, --wait-regex, --wait-contains and --wait-quiet cannot be combined")
	case n == 0 && set["timeout"]:
		return sp, false, fmt.Errorf("--timeout bounds a wait: give --wait-input, --wait-regex, --wait-contains or --wait-quiet")
	case n == 0:
		return sp, false, nil
	case timeout < 0:
		return sp, false, fmt.Errorf("invalid --timeout %v: must not be negative", timeout)
	}
	sp.Timeout = timeout
	switch {
	case set["wait-input"]:
		sp.Mode = waitcond.Input
	case set["wait-regex"]:
		r, err := regexp.Compile(re)
		if err != nil {
			return sp, false, fmt.Errorf("invalid --wait-regex: %v", err)
		}
		sp.Mode, sp.Regex = waitcond.Regex, r
	case set["wait-contains"]:
		if contains == "" {
			return sp, false, fmt.Errorf("--wait-contains needs a non-empty text")
		}
		sp.Mode, sp.Text = waitcond.Contains, contains
	default:
		if quiet <= 0 {
			return sp, false, fmt.Errorf("invalid --wait-quiet %v: must be positive", quiet)
		}
		sp.Mode, sp.QuietFor = waitcond.Quiet, quiet
	}
	return sp, true, nil
}

// textFlags collects every --text with the number of key names that came
// before it on the command line.
type textFlags struct {
	names int // key names parsed so far; parseInterleaved keeps it current
	list  []textAt
}

type textAt struct {
	at   int
	text string
}

func (f *textFlags) String() string {
	if f == nil {
		return ""
	}
	var s []string
	for _, t := range f.list {
		s = append(s, t.text)
	}
	return strings.Join(s, "")
}

func (f *textFlags) Set(v string) error {
	f.list = append(f.list, textAt{at: f.names, text: v})
	return nil
}

// parseInterleaved parses flags that may come before, between or after
// the key names of --keys (Go's flag package stops at the first
// non-flag); everything after "--" is a key name. Before each run of
// flags it stores in *count the number of names seen so far.
func parseInterleaved(c *cli, args []string, count *int) (names []string, done bool, code int) {
	c.positional = true // the key names
	rest := args
	for {
		*count = len(names)
		if done, code := c.parse(rest); done {
			return nil, true, code
		}
		left := c.fs.Args()
		if k := len(rest) - len(left); k > 0 && rest[k-1] == "--" {
			return append(names, left...), false, exitOK
		}
		i := 0
		for i < len(left) && !strings.HasPrefix(left[i], "-") {
			i++
		}
		names = append(names, left[:i]...)
		if i == len(left) {
			return names, false, exitOK
		}
		rest = left[i:]
	}
}

// encodeKeys turns key names into bytes, asking the daemon for the
// program's cursor-key mode unless mode fixes it.
func encodeKeys(socket string, names []string, mode string) ([]byte, bool) {
	var app bool
	switch mode {
	case "normal":
	case "application":
		app = true
	case "auto", "":
		var st wire.StatusData
		if !call(socket, map[string]any{"type": "STATUS"}, &st) {
			return nil, false
		}
		app = st.AppCursorKeys
	default:
		fmt.Fprintf(os.Stderr, "Error: invalid --cursor-keys %q: expected auto, normal or application\n", mode)
		return nil, false
	}
	b, err := keys.Encode(names, app)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return nil, false
	}
	return b, true
}

// inputRequest is the INPUT request that types data. Bytes that are not
// valid UTF-8 cannot travel in the JSON string "data"; when exact they also
// go as "data_b64", which the daemon then writes unchanged, while "data"
// still carries wireText's spelling for a daemon that knows only "data".
func inputRequest(data []byte, exact bool) map[string]any {
	req := map[string]any{"type": "INPUT", "data": wireText(data)}
	if exact && !utf8.Valid(data) {
		req["data_b64"] = base64.StdEncoding.EncodeToString(data)
	}
	return req
}

// wireText turns input bytes into the JSON string INPUT carries. UTF-8 goes
// as it is; a byte that is not part of a valid sequence (\xff, or binary
// on stdin) becomes the character of the same number, U+0000..U+00FF, as
// interminai sends `\xHH`, instead of the U+FFFD JSON encoding would put
// in its place.
func wireText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var s strings.Builder
	s.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			r = rune(b[0])
		}
		s.WriteRune(r)
		b = b[n:]
	}
	return s.String()
}
