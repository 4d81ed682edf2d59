//go:build unix

// Package hosttest drives the real ptyplex-sidecar binary over pipes, the
// way a host does, for end-to-end tests and benchmarks.
package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/ptyplex/ptyplex/internal/testing/buildtags"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// Binary builds a command of this module once per test process (with the
// race detector when the tests run with it) and returns its path. pkg is
// the import path relative to the module root, e.g. "./cmd/ptyplex-sidecar".
func Binary(pkg string) (string, error) {
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "ptyplex-bin-")
	})
	if buildErr != nil {
		return "", buildErr
	}
	binMu.Lock()
	defer binMu.Unlock()
	if p, ok := built[pkg]; ok {
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(buildDir, filepath.Base(pkg))
	args := append([]string{"build", "-o", out}, buildtags.GoBuildArgs()...)
	if RaceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append(args, pkg)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out, nil
}

var (
	binMu sync.Mutex
	built = map[string]string{}
)

// Cleanup removes the built binaries; call it from TestMain after m.Run.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
