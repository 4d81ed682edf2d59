//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readableFile is a file of ours that other users may read: what the
// usual umask (022) makes of `touch dump.log`, or one kept readable only
// by the group.
func readableFile(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(sharedDir(t, os.ModeSticky|0o777), "out")
	if err := os.WriteFile(p, []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// A dump of a session holds what its program echoed, a password typed at
// a prompt that echoes included. Appending it to a file every user can
// read would publish it, so start refuses, says why, and writes nothing.
func TestPTYDumpRefusesReadableFile(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		t.Run(mode.String(), func(t *testing.T) {
			out := readableFile(t, mode)
			r := ptyplex(t, "", "start", "--pty-dump", out, "--", "sh", "-c", "echo SECRET; exec cat")
			if r.code == 0 {
				stopStarted(t, r.stdout)
				t.Fatalf("start dumped a session into a file of mode %v: %v", mode, r)
			}
			want := "refusing to write to " + out + ": other users may read it (mode " + modeOctal(mode) + ")"
			if !strings.Contains(r.stderr, want) {
				t.Errorf("start's error does not say %q:\n%v", want, r)
			}
			if !strings.Contains(r.stderr, "chmod 600") {
				t.Errorf("start's error does not say how to fix it:\n%v", r)
			}
			assertFile(t, out, "before\n")
		})
	}
}

// The MCP server's log names every command and socket and can carry what
// an agent typed: the same rule.
func TestSecurityMCPLogRefusesReadableFile(t *testing.T) {
	t.Parallel()
	out := readableFile(t, 0o644)
	r := ptyplex(t, "", "mcp", "--log", out)
	if r.code == 0 {
		t.Fatalf("mcp logged to a file every user can read: %v", r)
	}
	if want := "refusing to write to " + out + ": other users may read it (mode 0644)"; !strings.Contains(r.stderr, want) {
		t.Errorf("mcp's error does not say %q:\n%v", want, r)
	}
	assertFile(t, out, "before\n")
}

func modeOctal(m os.FileMode) string {
	const digits = "01234567"
	p := uint32(m.Perm())
	return string([]byte{'0', digits[p>>6&7], digits[p>>3&7], digits[p&7]})
}
