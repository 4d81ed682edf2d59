//go:build unix

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/internal/cescape"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
	"github.com/ptyplex/ptyplex/replay"
)

func init() {
	register("replay", "replay a recorded frame fixture against a fresh sidecar", runReplay)
}

// runReplay replays each fixture named on the command line and reports, per
// fixture, ok or the mismatches. It exits 0 when all replayed green, 1 when
// one did not, 2 on usage or I/O errors, and 2 without running anything
// when --yes is missing.
const replaySynopsis = "ptyplex replay [--yes | --dump] [--sidecar PATH] [--timeout D] [-v] FIXTURE..."

func runReplay(args []string) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	sidecar := fs.String("sidecar", "", "the ptyplex-sidecar to test, at `PATH` (default: next to ptyplex, else in $PATH)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long (`DURATION`) to wait for the sidecar before each host frame")
	dump := fs.Bool("dump", false, "print the fixture's records instead of replaying them (runs nothing)")
	yes := fs.Bool("yes", false, "run the commands the fixtures open (they are printed first)")
	verbose := fs.Bool("v", false, "pass the sidecar's stderr through")
	fs.SetOutput(io.Discard) // help and errors are printed here
	help := func(w io.Writer) {
		fmt.Fprint(w, "Usage: "+replaySynopsis+"\n\n"+
			"Feeds each fixture's host frames to a fresh ptyplex-sidecar, in order, and checks\n"+
			"the answers against the recording: per terminal the same OPENED/ERROR/EXIT frames\n"+
			"(pids aside) and the same output. Fixtures are written by ptyplex-sidecar --record.\n\n"+
			"A fixture is a script: replaying it runs the commands its OPEN frames name, as you,\n"+
			"and types its recorded input into them. replay prints them first and runs nothing\n"+
			"without --yes, whoever made the file (a fixture from a bug report or a clone is\n"+
			"yours too). --dump only reads.\n\nFlags (-name and --name are the same):\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	usageError := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "Error: "+format+"\n", a...)
		fmt.Fprintf(os.Stderr, "Usage: %s\nRun 'ptyplex replay --help' for details.\n", replaySynopsis)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(os.Stdout)
			return exitOK
		}
		return usageError("%s", longFlagNames(err.Error()))
	}
	if fs.NArg() == 0 {
		return usageError("no FIXTURE given: name the fixture files to replay (recorded by ptyplex-sidecar --record)")
	}
	if *dump {
		for _, path := range fs.Args() {
			if err := replay.Dump(os.Stdout, path); err != nil {
				fmt.Fprintln(os.Stderr, "ptyplex replay:", err)
				return exitUsage
			}
		}
		return exitOK
	}
	// Everything is loaded and shown before anything runs, so that a
	// refusal (or a broken file) never leaves half of the fixtures run.
	var fixtures []*replay.Fixture
	for _, path := range fs.Args() {
		recs, err := record.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ptyplex replay:", err)
			return exitUsage
		}
		printCommands(os.Stderr, path, recs)
		f, err := replay.Prepare(path, recs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ptyplex replay:", cescape.EscapeControls(err.Error()))
			return exitUsage
		}
		fixtures = append(fixtures, f)
	}
	if !*yes {
		fmt.Fprintln(os.Stderr, "ptyplex replay: nothing was run; pass --yes to run the commands above as "+
			"you (read a fixture you did not record yourself first, e.g. with --dump)")
		return exitUsage
	}
	opts := replay.Options{Sidecar: *sidecar, StepTimeout: *timeout}
	if *verbose {
		opts.Stderr = os.Stderr
	}
	code := exitOK
	for _, f := range fixtures {
		rep, err := replay.Run(f, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ptyplex replay:", err)
			return exitUsage
		}
		fmt.Println(rep)
		if !rep.OK() {
			code = exitFail
		}
	}
	return code
}

// printCommands says what replaying recs will run: each OPEN's command,
// directory and environment, and how much input is typed into it. All
// of it comes from the file, so it is escaped: a fixture must not be able
// to hide a command behind a carriage return, or write to our terminal.
func printCommands(w io.Writer, path string, recs []record.Record) {
	var opens []string
	type typed struct {
		n     int
		first []byte
	}
	inputs := map[string]*typed{}
	var ids []string
	for _, r := range recs {
		if r.Kind != record.FromHost {
			continue
		}
		switch r.Frame.Type {
		case proto.TypeOpen:
			o, err := proto.ParseOpen(r.Frame.Body)
			if err != nil {
				opens = append(opens, showArg(o.TerminalID)+": a malformed OPEN, which the sidecar refuses: "+
					cescape.EscapeControls(string(r.Frame.Body)))
				continue
			}
			opens = append(opens, showArg(o.TerminalID)+": "+describeOpen(o))
		case proto.TypeInput:
			id, data, err := proto.ParseData(r.Frame.Body)
			if err != nil {
				continue
			}
			in := inputs[id]
			if in == nil {
				in = &typed{}
				inputs[id] = in
				ids = append(ids, id)
			}
			in.n += len(data)
			if len(in.first) < 80 {
				in.first = append(in.first, data[:min(len(data), 80-len(in.first))]...)
			}
		}
	}
	fmt.Fprintf(w, "%s opens %d terminal(s), running as you:\n", cescape.Escape(path), len(opens))
	for _, o := range opens {
		fmt.Fprintf(w, "  %s\n", o)
	}
	if len(ids) > 0 {
		fmt.Fprintln(w, "and types into them:")
	}
	for _, id := range ids {
		in, more := inputs[id], ""
		if len(in.first) < in.n {
			more = "..."
		}
		fmt.Fprintf(w, "  %s: %d bytes: %s%s\n", showArg(id), in.n, strconv.Quote(string(in.first)), more)
	}
}

// describeOpen is an OPEN as a command line a person can read: arguments
// with anything unusual quoted, then the directory and environment.
func describeOpen(o proto.Open) string {
	parts := []string{showArg(o.Cmd)}
	for _, a := range o.Args {
		parts = append(parts, showArg(a))
	}
	s := strings.Join(parts, " ")
	if o.Cwd != nil {
		s += "  (in " + showArg(*o.Cwd) + ")"
	}
	if len(o.Env) > 0 {
		keys := make([]string, 0, len(o.Env))
		for k := range o.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		env := make([]string, len(keys))
		for i, k := range keys {
			env[i] = showArg(k + "=" + o.Env[k])
		}
		s += "  (env " + strings.Join(env, " ") + ")"
	}
	return s
}

// showArg leaves a plain word as it is and quotes anything else, Go
// style, which escapes every control and invisible character.
func showArg(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c)) {
			return strconv.Quote(s)
		}
	}
	return s
}
