//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The older forms of interminai's command line and requests, which scripts
// and skills written for it still use: `running`, `output --format`, the
// RUNNING request, and RESIZE's answer with the size at the top level.
func TestOlderInterminaiForms(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", `printf '\033[31mred\033[0m ready\n'; read x; exit 3`)
	s.waitText("ready")

	if r := s.run("running"); r.code != 0 || r.stdout != "" {
		t.Errorf("running while the program runs: %v", r)
	}
	st := rawCall(t, s.sock, `{"type":"RUNNING"}`)
	assert.Equal(t, "ok", st["status"])
	assert.Equal(t, true, st["data"].(map[string]any)["running"], "RUNNING answer %v", st)

	plain := s.ok("output", "--format", "ascii")
	assert.Contains(t, plain, "red ready")
	assert.NotContains(t, plain, "\x1b[", "--format ascii printed escapes")
	assert.Contains(t, s.ok("output", "--format", "ansi"), "\x1b[31m")
	assert.Equal(t, plain, s.ok("output", "--format", "json"), "--format json is answered as ascii")
	if r := s.run("output", "--format", "xml"); r.code != 2 {
		t.Errorf("output --format xml: %v, want a usage error", r)
	}

	rs := rawCall(t, s.sock, `{"type":"RESIZE","cols":100,"rows":30}`)["data"].(map[string]any)
	assert.Equal(t, float64(100), rs["cols"])
	assert.Equal(t, float64(30), rs["rows"])
	assert.Equal(t, "Terminal resized to 90x20\n", s.ok("resize", "--size", "90x20"))

	s.input("\n")
	if r := s.ok("wait", "--quiet"); strings.TrimSpace(r) != "3" {
		t.Errorf("wait --quiet: %q", r)
	}
	if r := s.run("running"); r.code != 1 || r.stdout != "3\n" {
		t.Errorf("running after exit 3: %v, want \"3\" and exit 1", r)
	}
}

// interminai's older explicit activity mode (`wait --activity`, `status
// --activity`), its older emulator name (`--emulator alacritty`) and its
// start --color.
func TestOlderActivityFlagAndEmulatorName(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"wait", "status"} {
		h := ptyplex(t, "", cmd, "--help")
		assert.Contains(t, h.stdout+h.stderr, "--activity", "%s --help", cmd)
	}
	s := start(t, "--emulator", "alacritty", "--color", "--", "sh", "-c", `read x; printf '\033[31mterm %s got %s\033[0m\n' "$TERM" "$x"`)
	for _, bad := range [][]string{{"wait", "--activity", "--quiet"}, {"wait", "--activity", "--line", "1"}, {"status", "--activity", "--quiet"}} {
		if r := s.run(bad...); r.code != 2 {
			t.Errorf("%v: %v, want a usage error", bad, r)
		}
	}
	// Nothing has been printed and nobody else reads the flag: the wait
	// returns on the echo of this input (or the exit after it).
	s.input("hi\n")
	assert.Contains(t, s.ok("wait", "--activity"), "Terminal activity: true")
	if r := s.ok("wait", "--quiet"); strings.TrimSpace(r) != "0" {
		t.Errorf("wait --quiet: %q", r)
	}
	s.waitText("term xterm-256color got hi")
	assert.Contains(t, s.ok("output"), "\x1b[31mterm", "start --color: output has colour")
	assert.Contains(t, s.ok("status", "--activity"), "Activity: ")
	assert.Contains(t, s.ok("status", "--activity"), "Activity: false", "status --activity clears the flag")
}

// --emulator custom runs the program with TERM=ansi, as interminai's does.
func TestCustomEmulatorTerm(t *testing.T) {
	t.Parallel()
	s := start(t, "--emulator", "custom", "--", "sh", "-c", `echo "term $TERM."; exec cat`)
	s.waitText("term ansi.")
}

// Help asked for goes to stdout with exit 0, as clap's does for
// interminai; `help CMD` is `CMD --help`; no arguments is a usage error.
func TestHelpGoesToStdout(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := ptyplex(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "commands:") || !strings.Contains(r.stdout, "start") {
			t.Errorf("%v: %v", args, r)
		}
	}
	if r := ptyplex(t, "", "help", "wait"); r.code != 0 || !strings.Contains(r.stdout, "Terminal activity:") {
		t.Errorf("help wait: %v", r)
	}
	if r := ptyplex(t, ""); r.code != 2 || !strings.Contains(r.stderr, "commands:") {
		t.Errorf("no arguments: %v", r)
	}
}
