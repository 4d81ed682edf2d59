//go:build unix

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// subcommands lists the subcommands the usage names.
func subcommands(t *testing.T) []string {
	t.Helper()
	out := ok(t, "--help")
	_, list, _ := strings.Cut(out, "commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("usage lists %q", names)
	}
	return names
}

// A flag that --help shows with an argument name takes one: given without
// a value it is refused as such. Go's flag package takes a back-quoted
// word of the usage for the argument's name, boolean flags included, so a
// boolean flag whose text quoted a command showed as taking an argument
// (-shell-integration ptyplex run).
func TestHelpFlagArguments(t *testing.T) {
	t.Parallel()
	// As flag.PrintDefaults shows a flag with an argument: the name and
	// the argument, then the usage on a line of its own.
	line := regexp.MustCompile(`^  -([a-z][a-z-]*) (\S.*)$`)
	checked := 0
	for _, cmd := range subcommands(t) {
		h := ptyplex(t, "", cmd, "--help")
		lines := strings.Split(h.stdout+h.stderr, "\n")
		for i, l := range lines {
			m := line.FindStringSubmatch(l)
			if m == nil || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    \t") {
				continue
			}
			checked++
			args := []string{cmd}
			if cmd == "remote" {
				args = append(args, "install") // the flags are its subcommand's
			}
			want := "flag needs an argument: --" + m[1] // as the usage spells it
			if len(m[1]) == 1 {
				want = "flag needs an argument: -" + m[1]
			}
			if r := ptyplex(t, "", append(args, "-"+m[1])...); !strings.Contains(r.stderr, want) {
				t.Errorf("%s --help shows %q, but -%s takes no argument: %v", cmd, strings.TrimSpace(l), m[1], r)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d flags with an argument found in the helps", checked)
	}
}

// replay without a fixture is a usage error that says so (it printed the
// usage alone), and its --help exits 0 (it exited 2).
func TestReplayUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"replay"}, {"replay", "--yes"}, {"replay", "--dump"}} {
		r := ptyplex(t, "", args...)
		if r.code != exitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "Error: no FIXTURE given") || !strings.Contains(r.stderr, "Usage: ptyplex replay") {
			t.Errorf("%v: %v", args, r)
		}
	}
	if r := ptyplex(t, "", "replay", "--help"); r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: ptyplex replay") || !strings.Contains(r.stdout, "  -yes\n") {
		t.Errorf("replay --help: %v", r)
	}
}

// docs/cli.md's table gives every subcommand's flags, as its --help does
// (replay's lacked --timeout and -v). The older forms interminai's scripts
// pass (start --color, output --format, running) are described apart.
func TestDocsSynopsisHasEveryFlag(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(l, "| `"); ok {
			name, _, _ := strings.Cut(rest, " ")
			name = strings.TrimSuffix(name, "`")
			rows[name] += " " + l
		}
	}
	older := map[string]bool{"start -color": true, "output -format": true}
	flagLine := regexp.MustCompile(`^  -([a-z][a-z-]*)[ \t]`)
	for _, cmd := range subcommands(t) {
		if cmd == "running" {
			continue // interminai's older status --quiet, in the text above the table
		}
		row, found := rows[cmd]
		if !found {
			t.Errorf("docs/cli.md has no row for %s", cmd)
			continue
		}
		for _, l := range strings.Split(ok(t, cmd, "--help"), "\n") {
			m := flagLine.FindStringSubmatch(l)
			if m == nil || older[cmd+" -"+m[1]] {
				continue
			}
			dashes := "--"
			if len(m[1]) == 1 {
				dashes = "-"
			}
			if !regexp.MustCompile(regexp.QuoteMeta(dashes+m[1]) + `\b`).MatchString(row) {
				t.Errorf("docs/cli.md's row for %s lacks %s%s", cmd, dashes, m[1])
			}
		}
	}
}

// output --help describes the budget as it works: lines farthest from the
// cursor go first, not simply the top ones.
func TestOutputHelpBudget(t *testing.T) {
	if strings.Contains(outputAbout, "keeping the newest") || !strings.Contains(outputAbout, "farthest from the cursor") {
		t.Errorf("output --help misdescribes --max-chars:\n%s", outputAbout)
	}
}

// The flag package's errors name a flag with one dash (-socket) whichever
// the user typed; they are printed with the two of the usage, so that a
// --socket given without its path is an error that names --socket, as
// the command-line contract says of a missing --socket.
func TestFlagErrorsNameTheLongForm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--socket"}, "Error: flag needs an argument: --socket\n"},
		{[]string{"input", "-socket"}, "Error: flag needs an argument: --socket\n"},
		{[]string{"start", "--scrollback", "many", "--", "true"}, `Error: invalid value "many" for flag --scrollback: parse error` + "\n"},
		{[]string{"output", "--socket", "x", "--bogus"}, "Error: flag provided but not defined: --bogus\n"},
		{[]string{"output", "--socket", "x", "-n=x"}, `Error: invalid boolean value "x" for -n: parse error` + "\n"},
	} {
		r := ptyplex(t, "", c.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, c.want) {
			t.Errorf("ptyplex %s: %v\nwant stderr starting %q", strings.Join(c.args, " "), r, c.want)
		}
	}
}
