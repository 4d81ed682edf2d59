//go:build unix

// Command ptyplex runs interactive programs in a PTY behind a per-session
// daemon and lets scripts and agents drive them: start, input, output,
// status, wait, kill, resize, stop, debug (see README.md and PROTOCOL.md).
package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// commands maps subcommand names to their entry points. Files of this
// package register theirs in init functions, so each subcommand lives in a
// file of its own. run gets the arguments after the subcommand name and
// returns the process exit code.
var commands = map[string]command{}

type command struct {
	summary string
	run     func(args []string) int
}

func register(name, summary string, run func(args []string) int) {
	if _, dup := commands[name]; dup {
		panic("ptyplex: subcommand registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-h", "--help", "help":
		// Asked for, help goes to stdout (so it can be paged or grepped);
		// `help CMD` is `CMD --help`.
		if len(os.Args) > 2 {
			if c, ok := commands[os.Args[2]]; ok {
				os.Exit(c.run([]string{"--help"}))
			}
		}
		usage(os.Stdout)
		return
	}
	if os.Args[1] == "--version" || os.Args[1] == "-version" {
		fmt.Println(version.String("ptyplex", ptyhost.Backend()))
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "ptyplex: unknown command %q\n\n", os.Args[1])
		usage(os.Stderr)
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}

// guide tells a script or an agent which command fits which job.
const guide = `
Which to use:
  shell commands     start --shell-integration -- bash, then run -- 'CMD':
                     the output alone and the exit status, like sh -c
  prompts and REPLs  input --text T --keys Enter --wait-input: returns once
                     the program reads its terminal again (wait --input alone)
  long sessions      output --changes, then output --since TOKEN: only what
                     changed; --max-chars bounds any read
  how it looks       output --png FILE: the screen as an image
`

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ptyplex <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, guide)
	fmt.Fprintln(w, "\nRun 'ptyplex <command> --help' for the flags of one command,\n'ptyplex --version' for the version, commit, platform and PTY backend.")
}
