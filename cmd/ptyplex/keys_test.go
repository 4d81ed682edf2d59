//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keyEcho is a program that optionally turns on application cursor-key
// mode, then prints the hex of every byte it reads, one read per line,
// and "END" after a 'q'.
const keyEcho = `
import os, sys, tty
if sys.argv[1] == "app":
    sys.stdout.write("\x1b[?1h")
tty.setraw(0)
sys.stdout.write("ready\r\n")
sys.stdout.flush()
while True:
    b = os.read(0, 100)
    sys.stdout.write(b.hex() + "\r\n")
    sys.stdout.flush()
    if b"q" in b:
        sys.stdout.write("END\r\n")
        sys.stdout.flush()
`

// keysSent returns the hex of what the program read, once it saw the 'q'.
func keysSent(t *testing.T, mode string, args ...string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "keyecho.py")
	if err := os.WriteFile(script, []byte(keyEcho), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, "--", "python3", script, mode)
	s.waitText("ready")
	s.ok(append([]string{"input"}, args...)...)
	s.input("q")
	scr := s.waitText("END")
	var hex strings.Builder
	lines := strings.Split(scr, "\n")
	for _, l := range lines[1:] {
		if l == "END" {
			break
		}
		hex.WriteString(strings.TrimSpace(l))
	}
	return strings.TrimSuffix(hex.String(), "71") // the 'q'
}

func TestInputKeys(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	// Flags may come before, between and after the key names.
	normal := keysSent(t, "normal", "--text", "a", "--keys", "Enter", "Up", "--cursor-keys", "auto", "C-c", "F5", "Down*2")
	if want := "61" + "0d" + "1b5b41" + "03" + "1b5b31357e" + "1b5b42" + "1b5b42"; normal != want {
		t.Errorf("normal mode: sent %s, want %s", normal, want)
	}
	// The daemon reports application cursor-key mode; arrows follow it.
	app := keysSent(t, "app", "--keys", "Up", "Left", "Home", "Enter")
	if want := "1b4f41" + "1b4f44" + "1b4f48" + "0d"; app != want {
		t.Errorf("application mode: sent %s, want %s", app, want)
	}
	forced := keysSent(t, "app", "--keys", "--cursor-keys", "normal", "Up")
	if want := "1b5b41"; forced != want {
		t.Errorf("--cursor-keys normal: sent %s, want %s", forced, want)
	}
}
