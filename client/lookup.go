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
func FindSidecar() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			p := filepath.Join(filepath.Dir(self), SidecarName+exeSuffix)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && executable(fi) {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(SidecarName)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s not found next to this program nor in PATH (build it with `go build ./cmd/ptyplex-sidecar`, or set Options.SidecarPath)", SidecarName)
		}
		return "", err
	}
	return p, nil
}
