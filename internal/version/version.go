// Package version names the build of the ptyplex commands, for their
// --version flags. `make release` sets Version and Commit with -ldflags -X;
// a plain `go build` in a git checkout falls back to the commit Go records
// in the binary.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker: -X github.com/ptyplex/ptyplex/internal/version.Version=...
var (
	Version = "dev"
	Commit  = ""
)

// String is the --version line of the command called name, built with the
// PTY backend called backend (ptyhost.Backend(), which the mains pass in so
// that this package links nothing of the PTY host), e.g.
// "ptyplex-sidecar v0.3.0 (commit 1a2b3c4, darwin/arm64, portable backend)".
func String(name, backend string) string {
	return fmt.Sprintf("%s %s (commit %s, %s/%s, %s backend)", name, Version, commit(), runtime.GOOS, runtime.GOARCH, backend)
}

func commit() string {
	if Commit != "" {
		return Commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
