package sidecar_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/ptyhost"
)

func TestVersionFlag(t *testing.T) {
	out, err := exec.Command(sidecarBin, "--version").Output()
	if err != nil {
		t.Fatalf("ptyplex-sidecar --version: %v", err)
	}
	want := runtime.GOOS + "/" + runtime.GOARCH + ", " + ptyhost.Backend() + " backend"
	if s := string(out); !strings.HasPrefix(s, "ptyplex-sidecar ") || !strings.Contains(s, want) {
		t.Fatalf("ptyplex-sidecar --version printed %q, want the name and %q", s, want)
	}
}
