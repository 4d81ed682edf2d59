//go:build unix

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptyplex/ptyplex/internal/remoteinstall"
	"github.com/ptyplex/ptyplex/internal/version"
)

func init() {
	register("remote", "put ptyplex on another machine: remote install [user@]host", runRemote)
}

const remoteUsage = `Usage: ptyplex remote install [flags] [user@]host
       ptyplex remote install [flags] -- TRANSPORT...

Subcommands:
  install  put this version's ptyplex-sidecar and ptyplex on another machine

Installs ptyplex-sidecar and ptyplex of this version on another machine: asks
it for its OS and architecture (uname -sm), copies the matching binaries from
make release's output (--from DIR, holding DIR/<os>-<arch>/), or the ones
next to this ptyplex when the platforms match, into DIR/<version>/ under the
remote home (--dir, default ~/.ptyplex), and checks their SHA-256 and
--version there. A file it did not write itself is never replaced; the same
version again is a no-op. The last line printed is the installed sidecar's
path, for a host's transport: ssh host PATH.

TRANSPORT is a command that runs its last argument as a shell command line
on the other machine, e.g. -- ssh -p 2222 -i key me@box (ssh does; for
kubectl use -- kubectl exec -i POD -- sh -c).
`

// remoteInstall is the flag set of remote install, with its flags.
type remoteInstall struct {
	fs        *flag.FlagSet
	dir, from *string
	quiet     *bool
}

func newRemoteInstall() *remoteInstall {
	fs := flag.NewFlagSet("ptyplex remote install", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // help and errors are printed by remoteHelp and runRemote
	return &remoteInstall{
		fs:    fs,
		dir:   fs.String("dir", "~/.ptyplex", "installation root `DIR` on the other machine (~/ is the remote home)"),
		from:  fs.String("from", "", "make release output: a `DIR` holding <os>-<arch>/ptyplex-sidecar and ptyplex"),
		quiet: fs.Bool("q", false, "print only the installed sidecar's path"),
	}
}

// remoteHelp writes the usage with the flags of remote install.
func remoteHelp(w io.Writer) {
	fmt.Fprint(w, remoteUsage)
	fmt.Fprint(w, "\nFlags of install (-name and --name are the same):\n")
	fs := newRemoteInstall().fs
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// remoteUsageError reports a wrong command line: the error, then the
// synopsis, on stderr; exit 2.
func remoteUsageError(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "Error: "+format+"\n", a...)
	synopsis, _, _ := strings.Cut(remoteUsage, "\n\n")
	fmt.Fprintf(os.Stderr, "%s\nRun 'ptyplex remote --help' for details.\n", synopsis)
	return exitUsage
}

func runRemote(args []string) int {
	if len(args) == 0 {
		return remoteUsageError("ptyplex remote needs a subcommand: install")
	}
	switch args[0] {
	case "install":
	case "--help", "-help", "-h", "help":
		remoteHelp(os.Stdout)
		return exitOK
	default:
		return remoteUsageError("unknown subcommand %q of ptyplex remote (there is one: install)", args[0])
	}
	ri := newRemoteInstall()
	fs := ri.fs
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			remoteHelp(os.Stdout)
			return exitOK
		}
		return remoteUsageError("%s", longFlagNames(err.Error()))
	}
	dir, from, quiet := ri.dir, ri.from, ri.quiet
	// Checked before the other machine is asked anything: with the
	// version installed there already, a --from that names nothing was
	// never read, and the install said it succeeded.
	if *from != "" {
		if fi, err := os.Stat(*from); err != nil || !fi.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			fmt.Fprintf(os.Stderr, "Error: remote install --from %s: %v (want make release's output, a directory holding <os>-<arch>/)\n", *from, err)
			return 1
		}
	}
	var transport []string
	switch rest := fs.Args(); {
	case len(rest) == 1 && !strings.HasPrefix(rest[0], "-"):
		transport = []string{"ssh", "-T", "-o", "BatchMode=yes", rest[0]}
	case len(os.Args) > 0 && len(rest) > 0 && argsHadDashDash(args):
		transport = rest
	default:
		return remoteUsageError("remote install: want one [user@]host, or -- and a transport command")
	}
	var log io.Writer = os.Stderr
	if *quiet {
		log = nil
	}
	res, err := remoteinstall.Install(remoteinstall.Options{
		Transport: transport, Dir: *dir, From: *from, Version: version.Version, Log: log,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex %v\n", err)
		return 1
	}
	if !*quiet {
		if len(res.Copied) > 0 {
			fmt.Fprintf(os.Stderr, "installed %s in %s (%s/%s): %s\n", strings.Join(res.Copied, " and "), res.Dir, res.OS, res.Arch, res.Reported)
		} else {
			fmt.Fprintf(os.Stderr, "already installed in %s (%s/%s): %s\n", res.Dir, res.OS, res.Arch, res.Reported)
		}
	}
	fmt.Println(res.Sidecar)
	return 0
}

// argsHadDashDash reports whether the arguments had a "--" before the
// transport (flag parsing swallows it).
func argsHadDashDash(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}
