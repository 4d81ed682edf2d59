//go:build unix

package client

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// untrusted says why the sidecar at p could have been put there or changed
// by another user (FindSidecar's rule), "" if it could not.
func untrusted(p string) string {
	me := uint32(os.Getuid())
	owner := func(fi fs.FileInfo) (uint32, bool) {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return 0, false
		}
		return st.Uid, st.Uid == me || st.Uid == 0
	}
	entry, err := os.Lstat(p)
	if err != nil {
		return err.Error()
	}
	if uid, ok := owner(entry); !ok {
		return fmt.Sprintf("it belongs to uid %d, not to you (uid %d) or root", uid, me)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err.Error()
	}
	if uid, ok := owner(fi); !ok {
		return fmt.Sprintf("it leads to a file of uid %d, not of you (uid %d) or root", uid, me)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("other users may write to it (mode %v)", fi.Mode().Perm())
	}
	dirs := []string{filepath.Dir(p)}
	if real, err := filepath.EvalSymlinks(p); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		di, err := os.Stat(d)
		if err != nil {
			return err.Error()
		}
		if uid, ok := owner(di); !ok {
			return fmt.Sprintf("its directory %s belongs to uid %d, who could replace it", d, uid)
		}
		if di.Mode().Perm()&0o022 != 0 && di.Mode()&fs.ModeSticky == 0 {
			return fmt.Sprintf("other users may write to its directory %s (mode %v), and so replace it", d, di.Mode())
		}
	}
	return ""
}
