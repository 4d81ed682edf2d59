//go:build unix

package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// Every daemon records itself in a per-user directory, so that
// `ptyplex list` and the MCP server's list tool find sessions whatever
// their socket path. The directory is $PTYPLEX_RUNTIME_DIR, else
// $XDG_RUNTIME_DIR/ptyplex, else /tmp/ptyplex-<uid>; it is private (0700)
// and must belong to us. /tmp is shared, so another user can create
// /tmp/ptyplex-<uid> before we do; then the registry moves to the user's
// cache directory (~/.cache/ptyplex/sessions), which nobody else can
// create, rather than leaving every session out of `list`.

// AutoDirPrefix names the private /tmp directory of an auto-generated
// socket; existing tooling looks for the interminai name.
const AutoDirPrefix = "interminai-"

// RuntimeDirEnv overrides the registry directory (used by tests, and by
// anyone who wants separate sets of sessions).
const RuntimeDirEnv = "PTYPLEX_RUNTIME_DIR"

// Record is one registry entry: what a daemon wrote about itself.
type Record struct {
	Socket   string    `json:"socket"`
	PID      int       `json:"pid"` // the daemon's
	ChildPID int       `json:"child_pid"`
	Command  []string  `json:"command"`
	Started  time.Time `json:"started"`
	Auto     bool      `json:"auto_generated"`
	file     string    // the entry's path, set by readRecords
}

// RegistryDir returns the registry directory, creating it (0700) if need
// be. It refuses a directory that is not ours or is open to others.
func RegistryDir() (string, error) {
	dir, _, err := RegistryDirNote()
	return dir, err
}

// RegistryDirNote is RegistryDir, plus a sentence for the user when the
// usual directory in /tmp could not be used and the one in the cache
// directory was taken instead: someone else created it, which is worth
// knowing.
func RegistryDirNote() (dir, note string, err error) {
	dirs, fallbackErr, err := RegistryCandidates(os.Getenv)
	if err != nil {
		return "", "", err
	}
	firstErr := makePrivateDir(dirs[0])
	if firstErr == nil {
		return dirs[0], "", nil
	}
	if len(dirs) == 1 {
		if fallbackErr != nil {
			return "", "", fmt.Errorf("%w; no fallback either (%v): set XDG_RUNTIME_DIR or %s to a private directory", firstErr, fallbackErr, RuntimeDirEnv)
		}
		return "", "", firstErr
	}
	dir = dirs[1]
	if err := makePrivateDir(dir); err != nil {
		return "", "", fmt.Errorf("%w; the fallback %s cannot be used either: %v (set XDG_RUNTIME_DIR or %s to a private directory)", firstErr, dir, err, RuntimeDirEnv)
	}
	return dir, fmt.Sprintf("%v; using %s instead (XDG_RUNTIME_DIR is not set)", firstErr, dir), nil
}

// RegistryCandidates returns, for the environment getenv reads, where
// the registry directory is: the one directory $PTYPLEX_RUNTIME_DIR or
// $XDG_RUNTIME_DIR names, or else /tmp/ptyplex-UID and, after it, the
// fallback in the user's cache directory (fallbackErr says why there is
// none). It creates and checks nothing: a process that started another
// with a different environment (the Go client, its server) finds the
// other's directory with it.
func RegistryCandidates(getenv func(string) string) (dirs []string, fallbackErr, err error) {
	if dir := getenv(RuntimeDirEnv); dir != "" {
		if !filepath.IsAbs(dir) {
			// Each process would find it under its own working directory:
			// list would not see the sessions started elsewhere.
			return nil, nil, fmt.Errorf("session registry: %s must be an absolute path, not %q", RuntimeDirEnv, dir)
		}
		return []string{dir}, nil, nil
	}
	// A relative XDG_RUNTIME_DIR is invalid and to be ignored (the XDG
	// base directory specification), for the same reason.
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		return []string{filepath.Join(x, "ptyplex")}, nil, nil
	}
	dirs = []string{filepath.Join("/tmp", "ptyplex-"+strconv.Itoa(os.Getuid()))}
	cache, err := userCacheDir(getenv)
	if err != nil {
		return dirs, err, nil
	}
	return append(dirs, filepath.Join(cache, "ptyplex", "sessions")), nil, nil
}

// userCacheDir is os.UserCacheDir for the environment getenv reads.
func userCacheDir(getenv func(string) string) (string, error) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("$HOME is not defined")
		}
		return filepath.Join(home, "Library", "Caches"), nil
	}
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("neither $XDG_CACHE_HOME nor $HOME are defined")
		}
		return filepath.Join(home, ".cache"), nil
	}
	if !filepath.IsAbs(dir) {
		return "", errors.New("path in $XDG_CACHE_HOME is relative")
	}
	return dir, nil
}

// makePrivateDir creates dir (0700) unless it exists, and refuses it
// unless it is a directory of ours that nobody else may write to.
func makePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session registry: %w", err)
	}
	return checkPrivateDir(dir)
}

// readRecords returns the registry's entries; unreadable ones are skipped
// (a daemon may be writing its entry right now).
func readRecords(dir string) []Record {
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []Record
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var r Record
		if json.Unmarshal(b, &r) != nil || r.Socket == "" {
			continue
		}
		r.file = n
		out = append(out, r)
	}
	return out
}
