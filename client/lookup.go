package client

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// SidecarName is the executable name the client looks for (with
// ".exe" on Windows, where PATH is searched with PATHEXT).
const SidecarName = "ptyplex-sidecar"

// FindSidecar returns the sidecar executable to run: the one next to the
// running binary if there is one (a host shipped together with its
// sidecar), otherwise the first in PATH.
//
// On Unix the one next to the binary is run only if no other user could
// have put it there or changed it: it (and a symbolic link by that name)
// belongs to this user or root and is not writable by group or others,
// and its directory belongs to this user or root and is either not
// writable by group or others or sticky (as /tmp is, where no one else can
// rename or replace a file of ours). That is the rule `ptyplex remote
// install` applies on the other machine. A host built into /tmp next to a
// ptyplex-sidecar another user planted there passes it over for the one
// in PATH, and fails, saying why, if PATH has none.
func FindSidecar() (string, error) {
	refused := ""
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(self), SidecarName+exeSuffix)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && executable(fi) {
				why := untrusted(p)
				if why == "" {
					return p, nil
				}
				refused = fmt.Sprintf("%s next to this program was not used: %s", p, why)
			}
		}
	}
	p, err := exec.LookPath(SidecarName)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			if refused != "" {
				return "", fmt.Errorf("%s; and there is none in PATH (set Options.SidecarPath, or put the sidecar in a directory of your own)", refused)
			}
			return "", fmt.Errorf("%s not found next to this program nor in PATH (build it with `go build ./cmd/ptyplex-sidecar`, or set Options.SidecarPath)", SidecarName)
		}
		return "", err
	}
	if refused != "" {
		// PATH may hold the very directory refused (/tmp in PATH).
		if why := untrusted(p); why != "" {
			return "", fmt.Errorf("%s; nor %s, found in PATH: %s (set Options.SidecarPath)", refused, p, why)
		}
	}
	return p, nil
}
