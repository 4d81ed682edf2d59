//go:build unix

package persist

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What an upgrade runs must prove, from the file itself, that it is a
// ptyplex-sidecar that reads our handover format: anything it would
// print could be printed by a script. A binary built from this module
// carries both proofs, put there by the Go toolchain: the build info
// names its main package, and handoverMark, a constant this package
// links into every binary that contains it, names the format.

// sidecarMainPath is the main package of the only binary that may take a
// persistent server over.
const sidecarMainPath = "github.com/ptyplex/ptyplex/cmd/ptyplex-sidecar"

// handoverMark is compiled into every binary that links this package,
// with the format it reads between the colon and the NUL. It must say
// HandoverFormat (TestHandoverMarkSaysTheFormat): a constant cannot be
// built from another with strconv.
const handoverMark = "\x00ptyplex-persist-handover-format:1\x00"

// candidateBound caps what is read of a candidate binary.
const candidateBound = 512 << 20

// openCandidate opens path once and verifies that open file; the upgrade
// then executes that very file (execCandidate), so that what is at path
// can be replaced after the check without effect. It returns the file
// and the version the binary was built as.
func openCandidate(path string) (*os.File, string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	to, err := verifyCandidate(f, path)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, to, nil
}

func verifyCandidate(f *os.File, path string) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", path)
	}
	if fi.Size() > candidateBound {
		return "", fmt.Errorf("%s is %d bytes, more than a ptyplex-sidecar (%d at most)", path, fi.Size(), candidateBound)
	}
	info, err := buildinfo.Read(f)
	if err != nil {
		return "", fmt.Errorf("%s is not a ptyplex-sidecar that can take over a persistent server: it is not a Go program with build information (%v)", path, err)
	}
	if info.Path != sidecarMainPath {
		return "", fmt.Errorf("%s is not a ptyplex-sidecar that can take over a persistent server: it is the Go program %q, not %s", path, info.Path, sidecarMainPath)
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Contains(data, []byte(handoverMark)) {
		prefix, _, _ := strings.Cut(handoverMark, ":")
		prefix += ":"
		if i := bytes.Index(data, []byte(prefix)); i >= 0 {
			rest := data[i+len(prefix):]
			if j := bytes.IndexByte(rest, 0); j > 0 && j < 12 {
				return "", fmt.Errorf("%s reads handover format %s, this server writes format %d", path, rest[:j], HandoverFormat)
			}
		}
		return "", fmt.Errorf("%s is a ptyplex-sidecar that does not say which handover format it reads (too old for a live upgrade to it)", path)
	}
	return builtVersion(info), nil
}

// builtVersion is the version the binary says with --version: what
// `make build` set with -X, else the module's version and revision.
func builtVersion(info *buildinfo.BuildInfo) string {
	v, rev := info.Main.Version, ""
	for _, s := range info.Settings {
		switch s.Key {
		case "-ldflags":
			const x = "internal/version.Version="
			if i := strings.Index(s.Value, x); i >= 0 {
				f := strings.Fields(s.Value[i+len(x):])
				if len(f) > 0 {
					return strings.Trim(f[0], `'"`)
				}
			}
		case "vcs.revision":
			rev = s.Value
		}
	}
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " (" + rev + ")"
	}
	return v
}

// handoverMarkFormat is the format number handoverMark says.
func handoverMarkFormat() int {
	_, n, _ := strings.Cut(strings.Trim(handoverMark, "\x00"), ":")
	f, err := strconv.Atoi(n)
	if err != nil {
		return -1
	}
	return f
}
