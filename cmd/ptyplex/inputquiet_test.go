//go:build unix

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/buildtags"
)

// The quiet fallback of the input wait, which macOS and FreeBSD use
// (docs/platforms.md), tested on Linux with a binary built with
// -tags ptyplex_inputquiet, whose process table answers "unknown" as
// theirs do: the daemon's WAIT answers "detection": "quiet", wait --input
// says "Waiting for input (quiet for 500ms)", STATUS leaves
// waiting_for_input out, and a program that keeps printing is not taken
// for one that waits.
func TestWaitInputQuietFallback(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	qbin := filepath.Join(t.TempDir(), "ptyplex")
	tags := "ptyplex_inputquiet"
	if a := buildtags.GoBuildArgs(); len(a) == 2 {
		tags += "," + a[1]
	}
	// Without -race even when the tests run with it: a race build of
	// this second binary (its own link, nothing shared with the first)
	// cost 20 to 30 s of the package's time, and the daemon's code under
	// the race detector is what every other test here runs; this one is
	// about what the fallback answers.
	args := []string{"build", "-o", qbin, "-tags", tags}
	if b, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", tags, err, b)
	}
	run := func(args ...string) result {
		t.Helper()
		cmd := exec.Command(qbin, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{out.String(), errb.String(), code}
	}
	sock := filepath.Join(t.TempDir(), "s")
	prog := "import time\nfor i in range(3):\n    print('burst', i, flush=True)\n    time.sleep(0.1)\ninput('ready> ')\n"
	if r := run("start", "--socket", sock, "--", "python3", "-c", prog); r.code != 0 {
		t.Fatalf("start: %v", r)
	}
	t.Cleanup(func() { run("stop", "--socket", sock) })
	// The fallback cannot tell a program that has not started printing
	// from one that waits in silence: under load python3 may take longer
	// than 500ms to print its first line. The bursts are what this test
	// is about, so it waits for the first before asking.
	if r := run("wait", "--socket", sock, "--contains", "burst 0", "--timeout", deadline.String()); r.code != 0 {
		t.Fatalf("wait for the first burst: %v", r)
	}
	r := run("wait", "--socket", sock, "--input", "--timeout", deadline.String())
	if r.code != 0 || r.stdout != "Waiting for input (quiet for 500ms)\n" {
		t.Fatalf("wait --input: %v", r)
	}
	if scr := run("output", "--socket", sock, "--no-color").stdout; !strings.Contains(scr, "burst 2") || !strings.Contains(scr, "ready>") {
		t.Fatalf("wait --input returned before the prompt:\n%s", scr)
	}
	w := rawCall(t, sock, `{"type":"WAIT","input":true,"timeout_ms":10000}`)
	if d, _ := w["data"].(map[string]any); d["detection"] != "quiet" || d["waiting_for_input"] != true {
		t.Fatalf("WAIT input: %v", w)
	}
	st := rawCall(t, sock, `{"type":"STATUS"}`)
	if d, _ := st["data"].(map[string]any); d == nil {
		t.Fatalf("STATUS: %v", st)
	} else if _, has := d["waiting_for_input"]; has {
		t.Fatalf("STATUS says waiting_for_input though the build cannot tell: %v", st)
	}
	// A program printing every 20 ms is never quiet for 500 ms (in
	// process, so no fork of sleep(1) under load opens a gap).
	busy := filepath.Join(t.TempDir(), "b")
	if r := run("start", "--socket", busy, "--", "python3", "-c", "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.02)\n"); r.code != 0 {
		t.Fatalf("start: %v", r)
	}
	t.Cleanup(func() { run("stop", "--socket", busy) })
	if r := run("wait", "--socket", busy, "--contains", "tick", "--timeout", deadline.String()); r.code != 0 {
		t.Fatalf("wait for the first tick: %v", r)
	}
	if r := run("wait", "--socket", busy, "--input", "--timeout", "1500ms"); r.code == 0 || strings.Contains(r.stdout, "Waiting for input") {
		t.Fatalf("wait --input on a printing loop: %v", r)
	}
}
