//go:build unix

package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/ptyhost"
)

func TestVersionFlag(t *testing.T) {
	r := ptyplex(t, "", "--version")
	if r.code != 0 {
		t.Fatalf("ptyplex --version: %v", r)
	}
	want := runtime.GOOS + "/" + runtime.GOARCH + ", " + ptyhost.Backend() + " backend"
	if !strings.HasPrefix(r.stdout, "ptyplex ") || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "commit ") {
		t.Fatalf("ptyplex --version printed %q, want the name, a commit and %q", r.stdout, want)
	}
}
