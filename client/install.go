package client

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ptyplex/ptyplex/internal/remoteinstall"
	"github.com/ptyplex/ptyplex/internal/version"
)

// InstallOptions install the sidecar on the other machine before the
// first connect (Options.Install), the same steps as `ptyplex remote
// install` (docs/remote.md): ask the other side for its platform, copy the
// matching ptyplex-sidecar and ptyplex into a per-version directory
// there, check their hashes and --version. The same version already there
// is not copied again, and a file the installer did not write is never
// replaced. The client then runs the installed sidecar through Transport.
//
// Installing happens once, in Start; a reconnect runs the installed
// sidecar again without asking.
type InstallOptions struct {
	// Transport runs one shell command line on the other machine when the
	// line is appended as its last argument: {"ssh", "-T", "host"}. The
	// sidecar runs through it too, as TRANSPORT... "SIDECAR ARGS".
	Transport []string
	// From holds `make release` output (FROM/<os>-<arch>/<name>); for a
	// platform it lacks that is our own, the binaries next to the running
	// program (or in LocalDir) are used.
	From string
	// LocalDir is where this platform's binaries are; "" means the
	// directory of the running executable.
	LocalDir string
	// Dir is the installation root over there; "" means ~/.ptyplex.
	Dir string
	// Args are the sidecar's arguments, e.g. {"--persist", "work"} for
	// Options.Reconnect. Each is quoted for the remote shell.
	Args []string
	// Version names the directory; "" means this module's version
	// (internal/version), and a development build is named by its hash.
	Version string
	// Log receives the installer's progress lines; nil discards them.
	Log io.Writer
}

// install installs per opts.Install and returns the transport argv that
// runs the installed sidecar.
func install(opts Options) ([]string, error) {
	in := opts.Install
	if len(opts.Transport) > 0 || len(opts.Args) > 0 || opts.SidecarPath != "" {
		return nil, errors.New("start: with Options.Install the sidecar runs through InstallOptions.Transport with InstallOptions.Args; leave Transport, Args and SidecarPath empty")
	}
	if len(in.Transport) == 0 || in.Transport[0] == "" {
		return nil, errors.New("start: InstallOptions.Transport is empty")
	}
	ver := in.Version
	if ver == "" {
		ver = version.Version
	}
	res, err := remoteinstall.Install(remoteinstall.Options{
		Transport: in.Transport, Dir: in.Dir, From: in.From, LocalDir: in.LocalDir, Version: ver, Log: in.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	// res.Sidecar is a word for the remote shell already ("~/" for the
	// home); the arguments are quoted for it. exec: the remote shell
	// becomes the sidecar instead of waiting for it, so that the end of
	// the transport is the end of the sidecar's input and nothing else.
	line := []string{"exec", res.Sidecar}
	for _, a := range in.Args {
		line = append(line, shellQuote(a))
	}
	return append(append([]string(nil), in.Transport...), strings.Join(line, " ")), nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
