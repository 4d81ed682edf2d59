//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelativeRuntimeDirs: a relative registry directory would be found
// under each process's own working directory, so `list` run elsewhere
// would miss every session started elsewhere (and each run made a
// directory where it stood). A relative XDG_RUNTIME_DIR is ignored, as
// the XDG base directory specification says; a relative
// PTYPLEX_RUNTIME_DIR, ours, is refused with a message saying so.
func TestRelativeRuntimeDirs(t *testing.T) {
	t.Parallel()
	run := func(env ...string) (string, error) {
		t.Helper()
		dir := t.TempDir()
		cmd := exec.Command(bin, "list")
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") && !strings.HasPrefix(kv, "PTYPLEX_RUNTIME_DIR=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if _, serr := os.Stat(filepath.Join(dir, "rel")); serr == nil {
			t.Errorf("list with %v made a registry under its working directory", env)
		}
		return string(out), err
	}
	// list reads /tmp/ptyplex-<uid> then (the default registry), and
	// writes nothing there.
	if out, err := run("XDG_RUNTIME_DIR=rel"); err != nil {
		t.Errorf("list with a relative XDG_RUNTIME_DIR: %v\n%s", err, out)
	}
	out, err := run("PTYPLEX_RUNTIME_DIR=rel")
	if err == nil || !strings.Contains(out, "PTYPLEX_RUNTIME_DIR must be an absolute path") {
		t.Errorf("list with a relative PTYPLEX_RUNTIME_DIR: %v\n%s", err, out)
	}
}
