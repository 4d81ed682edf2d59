package replay

import (
	"path/filepath"
	"testing"
)

// Check is the test helper: it replays the fixture at path against the
// sidecar named in opts and fails t with every mismatch.
func Check(t testing.TB, path string, opts Options) *Report {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatalf("loading fixture: %v", err)
	}
	rep, err := Run(f, opts)
	if err != nil {
		t.Fatalf("replaying %s: %v", filepath.Base(path), err)
	}
	for _, m := range rep.Mismatches {
		t.Errorf("%s: %s", rep.Fixture, m)
	}
	return rep
}
