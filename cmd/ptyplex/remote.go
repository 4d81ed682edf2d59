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

flags:
`

func runRemote(args []string) int {
	if len(args) == 0 || args[0] != "install" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Print(remoteUsage)
			remoteFlags(io.Discard).PrintDefaults()
			return 0
		}
		fmt.Fprint(os.Stderr, remoteUsage)
		return 2
	}
	var out strings.Builder
	fs := remoteFlags(&out)
	dir := fs.String("dir", "~/.ptyplex", "installation root on the other machine (~/ is the remote home)")
	from := fs.String("from", "", "make release output: a directory holding <os>-<arch>/ptyplex-sidecar and ptyplex")
	quiet := fs.Bool("q", false, "print only the installed sidecar's path")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(remoteUsage + out.String())
			return 0
		}
		fmt.Fprint(os.Stderr, out.String())
		return 2
	}
	var transport []string
	switch rest := fs.Args(); {
	case len(rest) == 1 && !strings.HasPrefix(rest[0], "-"):
		transport = []string{"ssh", "-T", "-o", "BatchMode=yes", rest[0]}
	case len(os.Args) > 0 && len(rest) > 0 && argsHadDashDash(args):
		transport = rest
	default:
		fmt.Fprintf(os.Stderr, "ptyplex remote install: want one [user@]host, or -- and a transport command\n\n%s", remoteUsage)
		return 2
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

func remoteFlags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ptyplex remote install", flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
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
