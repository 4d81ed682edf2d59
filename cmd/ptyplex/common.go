//go:build unix

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/ptyplex/ptyplex/session/wire"
)

// Exit codes: 0 success, 1 failure (including an error answer from the
// daemon), 2 usage error.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// cli is the parsing state of one subcommand: its flag set and help text.
// Go's flag package accepts both -name and --name, which is what scripts
// written for interminai pass.
type cli struct {
	fs       *flag.FlagSet
	synopsis string // "ptyplex output --socket PATH [...]"
	about    string // paragraphs after the synopsis
	socket   string
	// positional says the command takes arguments besides its flags
	// (start's command, input's key names); the others refuse them, as
	// interminai does, rather than ignore them.
	positional bool
}

func newCLI(name, synopsis, about string, withSocket bool) *cli {
	c := &cli{fs: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis, about: about}
	c.fs.SetOutput(io.Discard) // we print help and errors ourselves
	if withSocket {
		c.fs.StringVar(&c.socket, "socket", "", "path of the session `socket` (printed by 'ptyplex start'); required")
	}
	return c
}

// parse parses args. It returns done=true with an exit code when the
// command should end now (help was asked for, or the flags were wrong).
func (c *cli) parse(args []string) (done bool, code int) {
	err := c.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.help(os.Stdout)
		return true, exitOK
	}
	if err == nil && !c.positional && c.fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument '%s' (%s takes none besides its flags)", c.fs.Arg(0), "ptyplex "+c.fs.Name())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %s\n", longFlagNames(err.Error()))
		fmt.Fprintf(os.Stderr, "Usage: %s\nRun '%s --help' for details.\n", c.synopsis, "ptyplex "+c.fs.Name())
		return true, exitUsage
	}
	return false, exitOK
}

// flagName matches a flag as the flag package names it in its errors
// ("flag needs an argument: -socket", "invalid value ... for flag -size",
// "flag provided but not defined: -bogus"): one dash, whichever the user
// typed.
var flagName = regexp.MustCompile(`(argument: |defined: |flag |for )-([A-Za-z][A-Za-z0-9-]+)`)

// longFlagNames writes those flags as the usage and the docs spell them,
// --socket, so that the message names the option as typed (a script's
// check for "--socket" in it holds); one-letter flags (-n) keep one dash.
func longFlagNames(msg string) string {
	return flagName.ReplaceAllString(msg, "${1}--${2}")
}

// needSocket checks the --socket flag, which every client command requires.
func (c *cli) needSocket() (ok bool) {
	if c.socket == "" {
		fmt.Fprintf(os.Stderr, "Error: the --socket option is required (the socket path printed by 'ptyplex start')\nUsage: %s\n", c.synopsis)
		return false
	}
	return true
}

func (c *cli) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n\nFlags (-name and --name are the same):\n", c.synopsis, strings.TrimSpace(c.about))
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

// usageError reports a wrong combination of flags or arguments.
func (c *cli) usageError(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "Error: "+format+"\n", a...)
	fmt.Fprintf(os.Stderr, "Usage: %s\n", c.synopsis)
	return exitUsage
}

// call sends req, with its fields in both forms (see wire.BothForms), and
// decodes the answer's data into out. On failure it prints the error (an
// error answer as "Error: <message>") and returns false.
func call(socket string, req, out any) bool {
	if m, ok := req.(map[string]any); ok {
		req = wire.BothForms(m)
	}
	err := wire.CallData(socket, req, out)
	if err == nil {
		return true
	}
	printError(err)
	return false
}

func printError(err error) {
	var de wire.DaemonError
	if errors.As(err, &de) {
		fmt.Fprintf(os.Stderr, "Error: %s\n", de.Text)
		return
	}
	fmt.Fprintf(os.Stderr, "Error: %s\n", describe(err))
}

// describe spells out connection errors the way users expect them: "No
// such file or directory" when the socket does not exist (scripts grep for
// it), with a hint about what that usually means.
func describe(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		msg = strings.ToUpper(msg[:1]) + msg[1:]
		hint := ""
		switch errno {
		case syscall.ENOENT:
			hint = " (is the session running? start one with 'ptyplex start')"
		case syscall.ECONNREFUSED:
			hint = " (the daemon behind this socket has stopped)"
		}
		// Replace the errno text at the end of the wrapped message.
		full := err.Error()
		if i := strings.LastIndex(full, errno.Error()); i >= 0 {
			return "Failed to " + full[:i] + msg + hint
		}
		return "Failed: " + full + hint
	}
	return err.Error()
}
