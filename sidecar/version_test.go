//go:build unix

package sidecar_test

import (
	"errors"
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

// TestExtraArgumentNamed: a stray argument is refused with exit 2, and the
// last line of stderr names it (the usage before it is long); stdout stays
// empty, as it carries only frames.
func TestExtraArgumentNamed(t *testing.T) {
	cmd := exec.Command(sidecarBin, "extra")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("ptyplex-sidecar extra: %v, want exit 2", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `unexpected argument "extra"`) || stdout.Len() != 0 {
		t.Errorf("last line of stderr %q, stdout %q", last, stdout.String())
	}
}
