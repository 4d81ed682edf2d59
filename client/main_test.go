package client

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/buildtags"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// sidecarBin is the real ptyplex-sidecar, built once for the whole test
// binary. Its directory goes first in PATH, so the examples find it the way
// a host would.
var sidecarBin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(hostileEnv); mode != "" {
		// Re-executed as a hostile stand-in sidecar (hostile_test.go).
		os.Exit(runHostile(mode))
	}
	if swallow := os.Getenv(relayEnv); swallow != "" {
		// Re-executed as a transport that can lose frames
		// (relay_test.go).
		os.Exit(runRelay(swallow, os.Args[1:]))
	}
	if os.Getenv(findSidecarEnv) != "" {
		// Re-executed from a copy to look for its sidecar
		// (unreachable_test.go).
		os.Exit(runFindSidecar())
	}
	finish := testproc.Start()
	os.Exit(finish(runTests(m)))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ptyplex-client-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sidecarBin = filepath.Join(dir, SidecarName)
	build := exec.Command("go", append(append([]string{"build"}, buildtags.GoBuildArgs()...), "-o", sidecarBin, "github.com/ptyplex/ptyplex/cmd/ptyplex-sidecar")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the sidecar:", err)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return m.Run()
}
