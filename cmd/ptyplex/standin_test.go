//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/standin"
)

// TestCLIAgainstNestedFieldDaemon runs every client subcommand against the
// stand-in (package standin), which sees only the fields the CLI nests under "data".
func TestCLIAgainstNestedFieldDaemon(t *testing.T) {
	t.Parallel()
	d := standin.Start(t, "$ ls", "file", "")
	run := func(args ...string) string {
		t.Helper()
		r := ptyplex(t, "", append(args[:1:1], append([]string{"--socket", d.Socket}, args[1:]...)...)...)
		if r.code != 0 {
			t.Fatalf("ptyplex %s: %v", strings.Join(args, " "), r)
		}
		return r.stdout
	}
	expect := func(got, want, what string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %q, want %q", what, got, want)
		}
	}

	// The last row is blank and the stand-in sends no newline after it: it
	// is still a row, numbered from the answer's from/to.
	expect(run("output", "--no-color", "-n"), " 1\t$ ls\n 2\tfile\n 3\t\n", "output -n")
	expect(run("output", "--no-color"), "$ ls\nfile\n\n", "output")
	expect(run("output", "--no-color", "--from", "2", "--to", "2", "-n"), " 2\tfile\n", "output of line 2")
	expect(run("status"), "Running: true\nActivity: true\nSize: 80x3\nScrollback: 0/0\n", "status")
	expect(run("wait"), "Terminal activity: true\nApplication exited: false\n", "wait")
	expect(run("wait", "--quiet"), "3\n", "wait --quiet")
	expect(run("wait", "--line", "2", "--regex", "^file$"), "Condition already met on line 2\n", "wait --line")
	expect(run("kill", "--signal", "SIGINT"), "", "kill")
	expect(run("resize", "--size", "100x30"), "Terminal resized to 100x30\n", "resize")
	run("debug", "--clear")
	if got := d.Nested("DEBUG"); got.(map[string]any)["clear"] != true {
		t.Errorf("debug --clear sent %v under data", got)
	}
	run("input", "--text", `hi\r`)
	expect(d.Nested("INPUT").(string), "hi\r", "INPUT data")
	run("stop")
}
