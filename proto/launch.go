package proto

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
)

// checkLaunch refuses what no child can be started with, saying which
// field and why. A NUL ends a C string, so the system cannot take one in
// a program's name, an argument, a directory or the environment: the
// spawn failed with a bare "invalid argument", or, for cmd, looked up a
// name it could never find. An environment name that is empty or holds
// '=' is no variable: "A=B" with value "v" gave the child the entry
// "A=B=v", which it reads as A set to "B=v".
func checkLaunch(o Open) error {
	if i := strings.IndexByte(o.Cmd, 0); i >= 0 {
		return fmt.Errorf("cmd %q has a NUL byte (at byte %d), which no program's name can hold", o.Cmd, i)
	}
	for n, a := range o.Args {
		if i := strings.IndexByte(a, 0); i >= 0 {
			return fmt.Errorf("args[%d] %q has a NUL byte (at byte %d), which no argument can hold", n, a, i)
		}
	}
	if i := strings.IndexByte(o.CommandLine, 0); i >= 0 {
		return fmt.Errorf("commandLine %q has a NUL byte (at byte %d), which no command line can hold", o.CommandLine, i)
	}
	if o.Cwd != nil {
		if i := strings.IndexByte(*o.Cwd, 0); i >= 0 {
			return fmt.Errorf("cwd %q has a NUL byte (at byte %d), which no path can hold", *o.Cwd, i)
		}
	}
	names := make([]string, 0, len(o.Env))
	for k := range o.Env {
		names = append(names, k)
	}
	sort.Strings(names) // the same complaint for the same body, whatever the map's order
	for _, k := range names {
		if err := checkEnvName(k); err != nil {
			return fmt.Errorf("env: invalid environment variable name %q: %v", k, err)
		}
		if i := strings.IndexByte(o.Env[k], 0); i >= 0 {
			return fmt.Errorf("env: the value of %q has a NUL byte (at byte %d), which no environment variable can hold", k, i)
		}
	}
	return nil
}

// checkEnvName says what is wrong with an environment variable's name.
// On Windows a name may start with '=': node-pty hosts pass on the hidden
// per-drive directories ("=C:") that process.env lists there, which the
// Windows sidecar has always left out of the child's environment quietly.
func checkEnvName(k string) error {
	rest := k
	if runtime.GOOS == "windows" && strings.HasPrefix(k, "=") && len(k) > 1 {
		rest = k[1:]
	}
	switch {
	case k == "":
		return fmt.Errorf("it is empty")
	case strings.IndexByte(rest, '=') >= 0:
		return fmt.Errorf(`it has "=", which ends a name`)
	case strings.IndexByte(k, 0) >= 0:
		return fmt.Errorf("it has a NUL byte")
	}
	return nil
}
