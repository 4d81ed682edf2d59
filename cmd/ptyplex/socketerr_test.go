//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/session/wire"
)

// TestSocketPathErrors: a --socket that is not a socket says what it is,
// and one over the kernel's length limit names the limit, for clients and
// for start.
func TestSocketPathErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("l", wire.MaxSocketPath))
	limit := strconv.Itoa(wire.MaxSocketPath) + " bytes"
	for _, tc := range []struct {
		path string
		want string
	}{
		{dir, "it is a directory, not a socket"},
		{file, "it is a regular file, not a socket"},
		{fifo, "it is a named pipe (FIFO), not a socket"},
		{long, limit},
	} {
		r := ptyplex(t, "", "status", "--socket", tc.path)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "refused") || strings.Contains(r.stderr, "nvalid argument") {
			t.Errorf("status --socket %s: want an error with %q; got %v", tc.path, tc.want, r)
		}
	}
	for _, tc := range []struct {
		path string
		want string
	}{
		{dir, "is a directory, not a socket"},
		{file, "is a regular file, not a socket"},
		{long, limit},
	} {
		r := ptyplex(t, "", "start", "--socket", tc.path, "--", "cat")
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "nvalid argument") {
			t.Errorf("start --socket %s: want an error with %q; got %v", tc.path, tc.want, r)
		}
	}
	// Nothing was lost: the file and directory are untouched.
	if b, err := os.ReadFile(file); err != nil || string(b) != "x" {
		t.Errorf("the regular file changed: %q %v", b, err)
	}
	// A path of exactly the limit works.
	fits := filepath.Join(dir, strings.Repeat("f", wire.MaxSocketPath-len(dir)-1))
	s := start(t, "--socket", fits, "--", "cat")
	if s.ok("status", "--quiet") != "" {
		t.Errorf("status --quiet of a running session printed something")
	}
}
