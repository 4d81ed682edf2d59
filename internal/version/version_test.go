package version

import (
	"runtime/debug"
	"testing"
)

// TestFromBuildInfo: without -ldflags the version and commit come from
// what Go recorded: a module version unless "(devel)", the revision cut to
// 12 digits and marked when the tree was modified.
func TestFromBuildInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		main     string
		settings []debug.BuildSetting
		version  string
		commit   string
	}{
		{"v1.2.3", rev, "v1.2.3", "1a2b3c4d5e6f-dirty"},
		{"(devel)", rev[:1], "", "1a2b3c4d5e6f"},
		{"", nil, "", ""},
	} {
		info := &debug.BuildInfo{Main: debug.Module{Version: c.main}, Settings: c.settings}
		if v, cm := fromBuildInfo(info); v != c.version || cm != c.commit {
			t.Errorf("fromBuildInfo(%q, %v) = %q, %q; want %q, %q", c.main, c.settings, v, cm, c.version, c.commit)
		}
	}
}
