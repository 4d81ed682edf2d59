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
	"strings"
	"sync"
	"syscall"
	"time"

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
		sweepBuildDirs()
		buildDir, buildErr = os.MkdirTemp("", buildDirPrefix)
		if buildErr == nil {
			buildErr = holdBuildDir(buildDir)
		}
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

const buildDirPrefix = "ptyplex-bin-"

// ownerLock is the file in a build directory that its test process holds
// locked (flock) for as long as it lives. Cleanup removes the directory at
// the end of a run; a test process that was killed (a -timeout panic, a
// SIGKILL) never gets there, and its directory of race-built binaries
// (8 to 30 MB) stayed in the temporary directory for good. The kernel lets
// go of a dead process's lock, so the next test process that builds
// sweeps what no live process holds.
const ownerLock = ".owner"

// buildLock is this process's open lock file: kept open (and so locked)
// until the process ends.
var buildLock *os.File

func holdBuildDir(dir string) error {
	// Locked under another name first, so that a sweep never finds the
	// lock file unlocked between its creation and its flock.
	tmp := filepath.Join(dir, ownerLock+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("build directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("build directory lock: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ownerLock)); err != nil {
		f.Close()
		return fmt.Errorf("build directory lock: %w", err)
	}
	buildLock = f
	return nil
}

// sweepBuildDirs removes the build directories of test processes that
// ended without Cleanup: those whose lock nobody holds, and those from
// before the lock (none in them) that are more than an hour old.
func sweepBuildDirs() {
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), buildDirPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		f, err := os.Open(filepath.Join(dir, ownerLock))
		if err != nil {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				os.RemoveAll(dir)
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(dir) // its owner is gone
		}
		f.Close()
	}
}

// Cleanup removes the built binaries; call it from TestMain after m.Run.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if buildLock != nil {
		buildLock.Close()
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
