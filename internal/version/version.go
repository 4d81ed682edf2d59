// Package version names the build of the ptyplex commands, for their
// --version flags. `make build`, `make npm` and `make release` set Version
// and Commit with -ldflags -X (from git describe and git rev-parse); a
// build without them (`go build`, `go install`) takes both from what Go
// records in the binary: the module version (a tag, or a pseudo-version
// made from the commit) and the VCS revision, so that it never says "dev
// (commit unknown)" when it was built from a git checkout.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the linker: -X github.com/ptyplex/ptyplex/internal/version.Version=...
var (
	Version = "dev"
	Commit  = ""
)

func init() {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	v, c := fromBuildInfo(info)
	if Version == "dev" && v != "" {
		Version = v
	}
	if Commit == "" {
		Commit = c
	}
}

// fromBuildInfo is the version and commit Go recorded: the main module's
// version unless it is "(devel)", and vcs.revision (12 digits, "-dirty"
// when vcs.modified says the tree had changes).
// Of is the Version of the binary whose build information is info: what it
// says with --version and in HELLO (the persistent server compares an
// upgrade's candidate with what the new image then answers).
func Of(info *debug.BuildInfo) string {
	for _, s := range info.Settings {
		if s.Key != "-ldflags" {
			continue
		}
		const x = "internal/version.Version="
		if i := strings.Index(s.Value, x); i >= 0 {
			if f := strings.Fields(s.Value[i+len(x):]); len(f) > 0 {
				return strings.Trim(f[0], `'"`)
			}
		}
	}
	if v, _ := fromBuildInfo(info); v != "" {
		return v
	}
	return "dev"
}

func fromBuildInfo(info *debug.BuildInfo) (version, commit string) {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		version = v
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
		return version, ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return version, rev
}

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
	return "unknown"
}
