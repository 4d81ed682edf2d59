package main

import (
	"flag"
	"fmt"
	"github.com/ptyplex/ptyplex/internal/cescape"
	"io"
	"os"
)

func init() {
	register("input", "send keys to the program (--text, --password, or stdin)", runInput)
}

const inputAbout = `
Sends input to the program. --text is unescaped C-style: \n \r \t \b \a \v
\f \e (or \E, ESC) \\ and \xHH; an unknown escape such as \z passes through
unchanged. --text wins over stdin. Without --text or --password, the bytes
of stdin are sent as they are.

--password shows the program's prompt (the cursor line and the non-empty
line above it) on stderr, reads a secret from the controlling terminal with
echo disabled (it is never shown and never on the command line), and sends
it followed by \r.

Examples:
  ptyplex input --socket S --text 'ihello\e:wq\r'
  printf 'ls\r' | ptyplex input --socket S
  ptyplex input --socket S --password`

func runInput(args []string) int {
	c := newCLI("input", "ptyplex input --socket PATH [--text TEXT | --password]", inputAbout, true)
	text := c.fs.String("text", "", "`TEXT` to send, with C-style escapes (\\n \\r \\t \\e \\xHH ...)")
	password := c.fs.Bool("password", false, "read a secret from the terminal with echo disabled and send it followed by \\r")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	textSet := false
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name == "text" {
			textSet = true
		}
	})
	if textSet && *password {
		return c.usageError("--text and --password cannot be used together")
	}
	var data []byte
	switch {
	case textSet:
		data = cescape.Unescape(*text)
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
	if !call(c.socket, map[string]any{"type": "INPUT", "data": string(data)}, nil) {
		return exitFail
	}
	return exitOK
}
