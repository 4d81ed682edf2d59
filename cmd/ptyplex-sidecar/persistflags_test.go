//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
)

// --list, --stop and --upgrade are one action each: two of them are a
// usage error, and the running server is left as it was (before, --list
// --stop stopped it silently and exited 0).
func TestPersistActionsExclusive(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PTYPLEX_RUNTIME_DIR", t.TempDir())
	env := os.Environ()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(args ...string) (string, string, int) {
		t.Helper()
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		cmd := exec.CommandContext(cctx, sidecar, args...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	t.Cleanup(func() { run("--persist", "w", "--stop") })
	c, err := client.Persistent("w", client.Options{SidecarPath: sidecar, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term, err := c.Open(ctx, client.OpenOptions{ID: "keep", Cmd: "/bin/sh", Args: []string{"-c", "echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(term).ReadString('\n'); err != nil || line != "ready\r\n" {
		t.Fatalf("terminal: %q, %v", line, err)
	}
	for _, args := range [][]string{
		{"--list", "--stop"},
		{"--stop", "--list"},
		{"--list", "--upgrade"},
		{"--stop", "--upgrade"},
		{"--list", "--stop", "--upgrade"},
	} {
		out, errs, code := run(append([]string{"--persist", "w"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, "cannot be used together") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and an error", args, code, out, errs)
		}
		// The server still runs, with its terminal.
		out, errs, code = run("--persist", "w", "--list")
		if code != 0 || !strings.Contains(out, "keep") {
			t.Fatalf("after %v: --list exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// --persist "" (a name from a variable that was not set, say) is refused
// as any other invalid name is: a usage error, exit 2. Before, it ran a
// plain sidecar, which ended with its host and kept nothing, and said
// nothing.
func TestPersistEmptyNameRefused(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PTYPLEX_RUNTIME_DIR", t.TempDir())
	for _, args := range [][]string{{"--persist", ""}, {"--persist="}, {"-persist", "", "--list"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, sidecar, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 2 || out.String() != "" ||
			!strings.Contains(errb.String(), `persistent sidecar name "": use 1 to 64 letters`) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and the name refused", args, code, out.String(), errb.String())
		}
	}
}

// A bridge given a server flag whose value means nothing (a journal of 0
// bytes, a --keep-exited of 0) refuses it as a usage error, exit 2, and
// starts no server. Before, the server took its default in its place,
// silently: --keep-exited 0 kept exited terminals for 24 h.
func TestPersistServerFlagsChecked(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("PTYPLEX_RUNTIME_DIR", dir)
	for _, args := range [][]string{
		{"--journal", "0"},
		{"--journal", "-5"},
		{"--journal", "268435457"},
		{"--journal-total", "0"},
		{"--keep-exited", "0"},
		{"--keep-exited", "-1s"},
		{"--journal-dir", filepath.Join(dir, "j"), "--journal-dir-max", "0"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, sidecar, append([]string{"--persist", "w"}, args...)...)
		cmd.Stdin = strings.NewReader("")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 2 || out.String() != "" || !strings.Contains(errb.String(), args[len(args)-2]+" "+args[len(args)-1]) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and the flag refused", args, code, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sidecar", "w.sock")); err == nil {
		t.Errorf("a server was started")
	}
}

// A server flag without --persist is a usage error, as --list or
// --readopt without it is: a plain sidecar keeps no journal, so it would
// have run with --journal-dir DIR given and kept nothing on disk, and
// said nothing (exit 0 at the end of its stdin).
func TestPersistServerFlagsNeedPersist(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("PTYPLEX_RUNTIME_DIR", dir)
	for _, args := range [][]string{
		{"--journal-dir", filepath.Join(dir, "j")},
		{"--orphan-timeout", "1m"},
		{"--journal", "65536", "--keep-exited", "1h"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, sidecar, args...)
		cmd.Stdin = strings.NewReader("")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 2 || out.String() != "" ||
			!strings.Contains(errb.String(), args[0]) || !strings.Contains(errb.String(), "server flags of --persist NAME") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and the flag named", args, code, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "j")); err == nil {
		t.Errorf("the journal directory was made")
	}
}
