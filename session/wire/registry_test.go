//go:build unix

package wire

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// RegistryCandidates reads the directory from the environment it is
// given, in the order RegistryDir takes it: the override, then
// XDG_RUNTIME_DIR, then /tmp and the cache directory's fallback.
func TestRegistryCandidates(t *testing.T) {
	tmp := filepath.Join("/tmp", "ptyplex-"+strconv.Itoa(os.Getuid()))
	cache := "/home/u/.cache"
	if runtime.GOOS == "darwin" {
		cache = "/home/u/Library/Caches"
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
		err  bool
	}{
		{"override", map[string]string{RuntimeDirEnv: "/r", "XDG_RUNTIME_DIR": "/x"}, []string{"/r"}, false},
		{"relative override", map[string]string{RuntimeDirEnv: "r"}, nil, true},
		{"xdg", map[string]string{"XDG_RUNTIME_DIR": "/x", "HOME": "/home/u"}, []string{"/x/ptyplex"}, false},
		{"relative xdg is ignored", map[string]string{"XDG_RUNTIME_DIR": "x", "HOME": "/home/u"}, []string{tmp, filepath.Join(cache, "ptyplex", "sessions")}, false},
		{"tmp and the cache", map[string]string{"HOME": "/home/u"}, []string{tmp, filepath.Join(cache, "ptyplex", "sessions")}, false},
		{"no home", map[string]string{}, []string{tmp}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs, _, err := RegistryCandidates(func(k string) string { return tc.env[k] })
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if len(dirs) != len(tc.want) {
				t.Fatalf("dirs = %q, want %q", dirs, tc.want)
			}
			for i := range dirs {
				if dirs[i] != tc.want[i] {
					t.Fatalf("dirs = %q, want %q", dirs, tc.want)
				}
			}
		})
	}
}
