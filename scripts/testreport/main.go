// Command testreport runs `go test -json` and prints what a person needs
// from it, or summarizes and compares saved runs.
//
//	testreport [-o FILE] [-slowest N] -- go test -json -cover ./...
//	testreport [-slowest N] FILE.json                 (summary of a saved run)
//	testreport -compare BEFORE.json AFTER.json        (tests, coverage, time per package)
//
// Running a command, it passes the package result lines (ok/FAIL with time
// and coverage) through as they come, and the full output of every test
// that failed; saves the raw JSON to FILE when -o is given; and ends with
// the N slowest tests, the number of tests and the statement coverage of
// each package. It exits non-zero when the command or any test failed, so
// no shell pipeline is needed to keep go test's status.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// pkgResult is what one package's run came to.
type pkgResult struct {
	name     string
	action   string  // pass, fail, skip (no tests)
	elapsed  float64 // seconds, the package's own figure
	coverage float64 // percent of statements, -1 if not reported
	top, all int     // tests run: top-level, and with subtests
}

type testResult struct {
	pkg, name string
	action    string
	elapsed   float64
}

// run collects a stream of events.
type run struct {
	pkgs    map[string]*pkgResult
	order   []string
	tests   []testResult
	outputs map[string][]string // package/test -> its output lines, until it passes
	failed  []string            // package/test of failed tests, in order
	echo    io.Writer           // where live lines go, nil for none
}

var coverRE = regexp.MustCompile(`coverage: ([0-9.]+)% of statements`)

func newRun(echo io.Writer) *run {
	return &run{pkgs: map[string]*pkgResult{}, outputs: map[string][]string{}, echo: echo}
}

func (r *run) pkg(name string) *pkgResult {
	p, ok := r.pkgs[name]
	if !ok {
		p = &pkgResult{name: name, coverage: -1}
		r.pkgs[name] = p
		r.order = append(r.order, name)
	}
	return p
}

func (r *run) add(e event) {
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	key := e.Package + "/" + e.Test
	switch e.Action {
	case "output", "build-output":
		if m := coverRE.FindStringSubmatch(e.Output); m != nil && e.Test == "" {
			p.coverage, _ = strconv.ParseFloat(m[1], 64)
		}
		r.outputs[key] = append(r.outputs[key], e.Output)
		if e.Test == "" && r.echo != nil && isResultLine(e.Output) && !strings.HasPrefix(e.Output, "\t") {
			fmt.Fprint(r.echo, e.Output)
		}
	case "pass", "fail", "skip":
		if e.Test == "" {
			p.action, p.elapsed = e.Action, e.Elapsed
			if e.Action == "fail" && r.echo != nil {
				// The package's own output (a panic, a build failure,
				// TestMain's messages) says why.
				for _, l := range r.outputs[key] {
					if !isResultLine(l) {
						fmt.Fprint(r.echo, l)
					}
				}
			}
			delete(r.outputs, key)
			return
		}
		p.all++
		if !strings.Contains(e.Test, "/") {
			p.top++
		}
		r.tests = append(r.tests, testResult{e.Package, e.Test, e.Action, e.Elapsed})
		if e.Action == "fail" {
			r.failed = append(r.failed, key)
			if r.echo != nil {
				fmt.Fprintf(r.echo, "--- FAIL: %s (%s)\n", e.Test, short(e.Package))
				for _, l := range r.outputs[key] {
					fmt.Fprint(r.echo, "    ", l)
				}
			}
		}
		delete(r.outputs, key)
	}
}

// isResultLine tells a package's result line; with -cover a package
// without tests has one that starts with a tab, which is not echoed.
func isResultLine(l string) bool {
	return strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t") ||
		(strings.HasPrefix(l, "\t") && strings.Contains(l, "coverage:"))
}

// read feeds every JSON line of in to r; other lines go to the echo as they are.
func (r *run) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			if r.echo != nil {
				fmt.Fprintf(r.echo, "%s\n", line)
			}
			continue
		}
		r.add(e)
	}
	return sc.Err()
}

func short(pkg string) string {
	if i := strings.Index(pkg, "/ptyplex/ptyplex/"); i >= 0 {
		return pkg[i+len("/ptyplex/ptyplex/"):]
	}
	if strings.HasSuffix(pkg, "/ptyplex/ptyplex") {
		return "."
	}
	return pkg
}

// summary prints the slowest tests, the counts and the coverage.
func (r *run) summary(w io.Writer, slowest int) {
	tops := make([]testResult, 0, len(r.tests))
	for _, t := range r.tests {
		if !strings.Contains(t.name, "/") {
			tops = append(tops, t)
		}
	}
	sort.SliceStable(tops, func(i, j int) bool { return tops[i].elapsed > tops[j].elapsed })
	if slowest > len(tops) {
		slowest = len(tops)
	}
	if slowest > 0 {
		fmt.Fprintf(w, "\nThe %d slowest tests:\n", slowest)
		for _, t := range tops[:slowest] {
			fmt.Fprintf(w, "  %8.1fs  %s  %s\n", t.elapsed, t.name, short(t.pkg))
		}
	}
	top, all := 0, 0
	fmt.Fprintf(w, "\n%-28s %7s %7s %9s %9s\n", "package", "time", "tests", "w/ subs", "coverage")
	names := append([]string(nil), r.order...)
	sort.Strings(names)
	for _, n := range names {
		p := r.pkgs[n]
		top += p.top
		all += p.all
		if p.top == 0 && p.action != "fail" {
			continue // no tests
		}
		cov := "-"
		if p.coverage >= 0 {
			cov = fmt.Sprintf("%.1f%%", p.coverage)
		}
		fmt.Fprintf(w, "%-28s %6.0fs %7d %9d %9s%s\n", short(n), p.elapsed, p.top, p.all, cov, failMark(p))
	}
	fmt.Fprintf(w, "%-28s %7s %7d %9d\n", "total", "", top, all)
	if len(r.failed) > 0 {
		fmt.Fprintf(w, "\n%d tests FAILED:\n", len(r.failed))
		for _, f := range r.failed {
			fmt.Fprintf(w, "  %s\n", short(f))
		}
	}
}

func failMark(p *pkgResult) string {
	if p.action == "fail" {
		return "  FAIL"
	}
	return ""
}

func (r *run) ok() bool {
	if len(r.failed) > 0 {
		return false
	}
	for _, p := range r.pkgs {
		if p.action == "fail" {
			return false
		}
	}
	return true
}

func readFile(name string) (*run, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := newRun(nil)
	return r, r.read(f)
}

// compare prints, per package, tests and coverage before and after, and
// marks where either went down.
func compare(w io.Writer, before, after *run) bool {
	names := map[string]bool{}
	for n := range before.pkgs {
		names[n] = true
	}
	for n := range after.pkgs {
		names[n] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	fmt.Fprintf(w, "%-28s %15s %15s %17s\n", "package", "time s", "tests", "coverage %")
	good := true
	var tb, ta, sb, sa int
	for _, n := range sorted {
		b, a := before.pkgs[n], after.pkgs[n]
		if b == nil {
			b = &pkgResult{coverage: -1}
		}
		if a == nil {
			a = &pkgResult{coverage: -1}
		}
		if b.top == 0 && a.top == 0 {
			continue
		}
		tb, ta, sb, sa = tb+b.top, ta+a.top, sb+b.all, sa+a.all
		mark := ""
		if a.top < b.top || a.coverage < b.coverage {
			mark = "  LOWER"
			good = false
		}
		fmt.Fprintf(w, "%-28s %6.0f -> %-6.0f %6d -> %-6d %7s -> %-7s%s\n", short(n), b.elapsed, a.elapsed,
			b.top, a.top, pct(b.coverage), pct(a.coverage), mark)
	}
	fmt.Fprintf(w, "%-28s %15s %6d -> %-6d (with subtests %d -> %d)\n", "total", "", tb, ta, sb, sa)
	return good
}

func pct(c float64) string {
	if c < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", c)
}

func main() {
	out := flag.String("o", "", "save the raw go test -json output to this file")
	slowest := flag.Int("slowest", 10, "how many of the slowest tests to list")
	cmp := flag.Bool("compare", false, "compare two saved runs: BEFORE.json AFTER.json")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testreport [-o FILE] [-slowest N] -- go test -json ...\n       testreport [-slowest N] FILE.json\n       testreport -compare BEFORE.json AFTER.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	switch {
	case *cmp:
		if len(args) != 2 {
			flag.Usage()
			os.Exit(2)
		}
		b, err := readFile(args[0])
		check(err)
		a, err := readFile(args[1])
		check(err)
		if !compare(os.Stdout, b, a) {
			os.Exit(1)
		}
	case len(args) == 1:
		r, err := readFile(args[0])
		check(err)
		r.summary(os.Stdout, *slowest)
	case len(args) > 1:
		os.Exit(runCommand(args, *out, *slowest))
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// runCommand runs go test and reports on its JSON as it comes.
func runCommand(args []string, out string, slowest int) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	check(err)
	var in io.Reader = stdout
	if out != "" {
		f, err := os.Create(out)
		check(err)
		defer f.Close()
		in = io.TeeReader(stdout, f)
	}
	check(cmd.Start())
	r := newRun(os.Stdout)
	readErr := r.read(in)
	err = cmd.Wait()
	r.summary(os.Stdout, slowest)
	if readErr != nil {
		fmt.Fprintln(os.Stderr, "testreport: reading the test output:", readErr)
		return 1
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) || !r.ok() {
		fmt.Fprintln(os.Stdout, "\nFAIL")
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 1
	}
	return 0
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}
