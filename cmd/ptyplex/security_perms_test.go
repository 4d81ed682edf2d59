//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
// a prompt that echoes included. An existing file of ours that other users
// may read (the usual umask's 0644, as a script's earlier run leaves it) is
// made private before anything is written, start says so, and the dump is
// appended after what the file held.
func TestPTYDumpMakesReadableFilePrivate(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o664} {
		t.Run(mode.String(), func(t *testing.T) {
			out := readableFile(t, mode)
			r := ptyplex(t, "", "start", "--pty-dump", out, "--", "sh", "-c", "echo SECRET; exec cat")
			if r.code != 0 {
				t.Fatalf("start with a dump file of mode %v: %v", mode, r)
			}
			t.Cleanup(func() { stopStarted(t, r.stdout) })
			want := "--pty-dump " + out + ": other users may read or write it (mode " + modeOctal(mode) + "); it is made private (0600)"
			if !strings.Contains(r.stderr, want) {
				t.Errorf("start's stderr does not say %q:\n%v", want, r)
			}
			waitFileContent(t, out, "before\nSECRET")
			if fi, err := os.Stat(out); err != nil || fi.Mode() != 0o600 {
				t.Errorf("dump file of mode %v after start: %v %v, want -rw-------", mode, fi.Mode(), err)
			}
		})
	}
}

// The MCP server's log names every command and socket and can carry what
// an agent typed: the same rule.
func TestSecurityMCPLogMakesReadableFilePrivate(t *testing.T) {
	t.Parallel()
	out := readableFile(t, 0o644)
	r := ptyplex(t, "", "mcp", "--log", out)
	if want := "--log " + out + ": other users may read or write it (mode 0644); it is made private (0600)"; !strings.Contains(r.stderr, want) {
		t.Errorf("mcp's stderr does not say %q:\n%v", want, r)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode() != 0o600 {
		t.Errorf("log file after mcp: %v %v, want -rw-------", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), "before\n") {
		t.Errorf("log file holds %q: what it held is gone", b)
	}
}

// waitFileContent waits until the file at path starts with prefix.
func waitFileContent(t *testing.T, path, prefix string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		b, _ := os.ReadFile(path)
		if strings.HasPrefix(string(b), prefix) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s holds %q, want it to start with %q", path, b, prefix)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func modeOctal(m os.FileMode) string {
	const digits = "01234567"
	p := uint32(m.Perm())
	return string([]byte{'0', digits[p>>6&7], digits[p>>3&7], digits[p&7]})
}
