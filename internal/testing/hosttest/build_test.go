//go:build unix

package hosttest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A build directory whose owner died (its lock free) is swept; one whose
// owner lives (the lock held) is kept, and so is an unlocked one too new to
// judge.
func TestSweepBuildDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mk := func(name string) string {
		d := filepath.Join(tmp, buildDirPrefix+name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "ptyplex"), []byte("binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := mk("dead")
	if err := os.WriteFile(filepath.Join(dead, ownerLock), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	live := mk("live")
	saved := buildLock
	t.Cleanup(func() { buildLock = saved })
	if err := holdBuildDir(live); err != nil {
		t.Fatal(err)
	}
	held := buildLock
	t.Cleanup(func() { held.Close() })
	fresh := mk("fresh") // no lock file yet: being created
	old := mk("old")     // from before the lock, two hours old
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "unrelated")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	sweepBuildDirs()
	for dir, want := range map[string]bool{dead: false, live: true, fresh: true, old: false, other: true} {
		_, err := os.Stat(dir)
		if got := err == nil; got != want {
			t.Errorf("%s: exists %v after the sweep, want %v", filepath.Base(dir), got, want)
		}
	}
}
