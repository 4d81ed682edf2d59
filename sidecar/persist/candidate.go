//go:build unix

package persist

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/internal/version"
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

// candidateBound caps what is read of a candidate binary.
const candidateBound = 512 << 20

// candidate is a binary an upgrade may run: the open file that was
// verified, the identity of the file it was when it was, and the bytes
// that were verified (what execCandidate runs where it can).
type candidate struct {
	*os.File
	dev, ino uint64
	image    []byte
	keeper   bool // it takes descriptors from a keeper
}

// openCandidate opens path once and verifies that open file; the upgrade
// then executes that very file (execCandidate), so that what is at path
// can be replaced after the check without effect. It returns the file
// and the version the binary was built as.
func openCandidate(path string) (*candidate, string, error) {
	// O_NONBLOCK: a FIFO at path would otherwise block the open until
	// someone writes to it, and the upgrade under way with it, so that
	// every later UPGRADE was refused as "another upgrade is under way".
	// The check below takes regular files only; for those the flag does
	// nothing.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, "", fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		if why := untrusted(path, &st); why != "" {
			f.Close()
			return nil, "", fmt.Errorf("%s could have been put there or changed by another user: %s", path, why)
		}
		if err := unix.SetNonblock(fd, false); err != nil {
			f.Close()
			return nil, "", fmt.Errorf("open %s: %w", path, err)
		}
	}
	to, image, err := verifyCandidate(f, path)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return &candidate{File: f, dev: uint64(st.Dev), ino: uint64(st.Ino), image: image,
		keeper: bytes.Contains(image, []byte(keeperMark))}, to, nil
}

// untrusted says why the binary at path, whose open file is st, could
// have been written or put there by another user, "" if it could not.
// What an upgrade runs becomes the server, with every terminal's PTY
// master and journal: a sidecar another user built from this module
// passes every other check. The rule is the Go client's for the sidecar
// it finds beside its host: the file (and a symbolic link to it) belongs
// to us or root and only its owner may write it, and so do the
// directories it is named in and found in, unless sticky, as /tmp is.
func untrusted(path string, st *unix.Stat_t) string {
	me := uint32(os.Geteuid())
	ours := func(uid uint32) bool { return uid == me || uid == 0 }
	if !ours(st.Uid) {
		return fmt.Sprintf("it belongs to uid %d, not to us (uid %d) or root", st.Uid, me)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Sprintf("other users may write to it (mode %04o)", st.Mode&0o7777)
	}
	var lst unix.Stat_t
	if err := unix.Lstat(path, &lst); err != nil {
		return err.Error()
	}
	if !ours(lst.Uid) {
		return fmt.Sprintf("it is named by a symbolic link of uid %d", lst.Uid)
	}
	dirs := []string{filepath.Dir(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		var ds unix.Stat_t
		if err := unix.Stat(d, &ds); err != nil {
			return err.Error()
		}
		if !ours(ds.Uid) {
			return fmt.Sprintf("its directory %s belongs to uid %d, who could replace it", d, ds.Uid)
		}
		if ds.Mode&0o022 != 0 && ds.Mode&unix.S_ISVTX == 0 {
			return fmt.Sprintf("other users may write to its directory %s (mode %04o), and so replace it", d, ds.Mode&0o7777)
		}
	}
	return ""
}

// descriptor is the candidate's descriptor number once it is proven to
// still be the file that was verified: a descriptor closed by mistake
// elsewhere in the process and its number reused would otherwise run
// whatever that number now holds.
func (c *candidate) descriptor() (int, error) {
	fd, err := fileFD(c.File)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return -1, fmt.Errorf("stat the verified %s (descriptor %d): %w", c.Name(), fd, err)
	}
	if uint64(st.Dev) != c.dev || uint64(st.Ino) != c.ino {
		return -1, fmt.Errorf("descriptor %d no longer holds the verified %s", fd, c.Name())
	}
	return fd, nil
}

// verifyCandidate checks the open file f and returns the version it was
// built as and its bytes.
func verifyCandidate(f *os.File, path string) (string, []byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", nil, fmt.Errorf("%s is not an executable file", path)
	}
	if fi.Size() > candidateBound {
		return "", nil, fmt.Errorf("%s is %d bytes, more than a ptyplex-sidecar (%d at most)", path, fi.Size(), candidateBound)
	}
	// Everything below is checked on one read of the file, the bytes
	// that execCandidate runs.
	data, err := io.ReadAll(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	info, err := readBuildInfo(data)
	if err != nil {
		return "", nil, fmt.Errorf("%s is not a ptyplex-sidecar that can take over a persistent server: it is not a Go program with build information (%v)", path, err)
	}
	if info.Path != sidecarMainPath {
		return "", nil, fmt.Errorf("%s is not a ptyplex-sidecar that can take over a persistent server: it is the Go program %q, not %s", path, info.Path, sidecarMainPath)
	}
	if !bytes.Contains(data, []byte(handoverMark)) {
		prefix, _, _ := strings.Cut(handoverMark, ":")
		prefix += ":"
		if i := bytes.Index(data, []byte(prefix)); i >= 0 {
			rest := data[i+len(prefix):]
			if j := bytes.IndexByte(rest, 0); j > 0 && j < 12 {
				return "", nil, fmt.Errorf("%s reads handover format %s, this server writes format %d", path, rest[:j], HandoverFormat)
			}
		}
		return "", nil, fmt.Errorf("%s is a ptyplex-sidecar that does not say which handover format it reads (too old for a live upgrade to it)", path)
	}
	return builtVersion(info), data, nil
}

// builtVersion is the version the binary says with --version and in
// HELLO, which --upgrade then compares.
func builtVersion(info *debug.BuildInfo) string { return version.Of(info) }

// handoverMarkFormat is the format number handoverMark says.
func handoverMarkFormat() int {
	_, n, _ := strings.Cut(strings.Trim(handoverMark, "\x00"), ":")
	f, err := strconv.Atoi(n)
	if err != nil {
		return -1
	}
	return f
}

// tryFlagsTimeout bounds the candidate's trial run (tryFlags).
const tryFlagsTimeout = 10 * time.Second

// tryFlags runs the verified candidate once, before anything is frozen,
// with the arguments the new image would be started with and
// --persist-handover-format, which makes a sidecar parse them all, print
// its handover line and exit. A candidate that carries our format's mark
// may still not know a flag this server passes on (a build from before
// --orphan-timeout, say): once executed in our place it would stop at its
// flags and every terminal would end with it. Here it only fails, and the
// upgrade is refused with what it said.
func (c *candidate) tryFlags(args []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), tryFlagsTimeout)
	defer cancel()
	path, done, err := c.runnable()
	if err != nil {
		return err
	}
	defer done()
	cmd := exec.CommandContext(ctx, path, append(args, "--persist-handover-format")...)
	cmd.Args[0] = c.Name()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not answer --persist-handover-format within %v", c.Name(), tryFlagsTimeout)
	}
	if _, ran := err.(*exec.ExitError); err != nil && !ran {
		// It never ran (the server out of descriptors or memory): that
		// says nothing of the binary, and blaming its age sent the user
		// after the wrong cause.
		return fmt.Errorf("could not try %s before the upgrade: %v", c.Name(), err)
	}
	if err != nil {
		said, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Errorf("%s does not accept this server's flags (%v: %q): it is too old or too new for a live upgrade to it", c.Name(), err, said)
	}
	want := fmt.Sprintf("%s %d ", HandoverBanner, HandoverFormat)
	if line := strings.TrimSpace(stdout.String()); !strings.HasPrefix(line+" ", want) {
		return fmt.Errorf("%s answered --persist-handover-format with %q, not %q...", c.Name(), line, want)
	}
	return nil
}
