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

// Of gives what a binary of that build information reports as Version:
// a persistent server's --upgrade compares the two, and a build with a
// module pseudo-version and a VCS revision (go install, or go build in a
// clone) was announced as "v0.0.0-... (7eb07293e794)" but answered
// "v0.0.0-...", which --upgrade took for a failed upgrade.
func TestOfIsWhatTheBinaryReports(t *testing.T) {
	pseudo := "v0.0.0-20261207063004-7eb07293e794"
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"ldflags", debug.BuildInfo{Main: debug.Module{Version: pseudo}, Settings: []debug.BuildSetting{
			{Key: "-ldflags", Value: "-s -w -X github.com/ptyplex/ptyplex/internal/version.Version=7eb0729 -X github.com/ptyplex/ptyplex/internal/version.Commit=7eb07293e794"},
			{Key: "vcs.revision", Value: "7eb07293e79400000000"}}}, "7eb0729"},
		{"pseudo-version and revision", debug.BuildInfo{Main: debug.Module{Version: pseudo}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "7eb07293e79400000000"}, {Key: "vcs.modified", Value: "false"}}}, pseudo},
		{"devel", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "7eb07293e79400000000"}}}, "dev"},
		{"nothing", debug.BuildInfo{}, "dev"},
	} {
		if got := Of(&c.info); got != c.want {
			t.Errorf("%s: Of = %q, want %q", c.name, got, c.want)
		}
		// What init would set, from the same information.
		v := "dev"
		if fv, _ := fromBuildInfo(&c.info); fv != "" {
			v = fv
		}
		if c.name != "ldflags" && v != c.want {
			t.Errorf("%s: the binary would report %q, Of says %q", c.name, v, c.want)
		}
	}
}
