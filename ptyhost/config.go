package ptyhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// DefaultTerm is the TERM value children get unless the caller sets one.
const DefaultTerm = "xterm-256color"

// Config describes the child to start.
type Config struct {
	Cmd  string   // program: a path, or a bare name looked up in the child's PATH as execvp does (see resolve)
	Args []string // arguments after the program name
	// CmdLine (Windows only) is the command line after the program, given
	// to the child as it is in place of Args, which must then be empty:
	// cmd.exe reads its line by rules of its own, not by those Args are
	// quoted for. Refused for a batch file, whose line cmd.exe would read
	// once more, and on Unix, where a child takes an argument vector.
	CmdLine string
	Dir     string // working directory; "" inherits ours
	// Env is merged over our own environment (or BaseEnv): entries here
	// win, and TERM defaults to DefaultTerm when Env does not set it.
	Env map[string]string
	// EnvOrder, when set, lists Env's names in the order the host sent
	// them (each at its last appearance). It matters only where names
	// are compared without case (Windows): of "Path" and "PATH" both in
	// Env, the one later in EnvOrder wins; without it, the later in
	// byte order (what a JSON encoder that sorts keys would send last).
	EnvOrder []string
	// BaseEnv, when not nil, stands in for our own environment as the
	// one Env is merged over (NAME=value entries, as os.Environ gives):
	// the persistent server starts a terminal from the environment of
	// the bridge its host spawned, as a plain sidecar would have had.
	BaseEnv    []string
	Cols, Rows int // clamped to 1..65535
	// UTF8 sets IUTF8 on the terminal, so that the line editor of a
	// program in cooked mode (read, cat, python's input) erases a whole
	// multi-byte character on backspace, not its last byte. Terminal
	// emulators set it in a UTF-8 locale; node-pty sets it for its utf8
	// encoding. Where the system has no IUTF8 (FreeBSD) it does nothing.
	UTF8 bool
	// NodePtyTermios starts the terminal with the attributes node-pty
	// gives its terminals instead of the kernel's defaults: IXANY (after
	// ^S any key restarts output), IMAXBEL, BRKINT, HUPCL, VEOL and
	// VEOL2 0xff, 38400 baud. The npm package asks for it; other faces
	// keep the kernel's (interminai's DEBUG reports the flags). Nothing
	// on Windows.
	NodePtyTermios bool
	// NoParentDeathSignal starts the child without the Linux backend's
	// parent-death signal (SIGKILL). That signal is tied to the thread
	// that forked the child, not to the process, and execve ends every
	// thread but the caller: a process that re-executes itself (the
	// persistent sidecar's live upgrade) would kill its own children.
	// Such a child gets the PTY hangup when we die, and nothing more.
	NoParentDeathSignal bool
}

// environ builds the child's environment: ours (or BaseEnv), then TERM,
// then cfg.Env.
// A name keeps the place of its first appearance and takes its last
// value. Entries nobody overrides are passed on as they are, without
// building a new string for each (this runs on every OPEN).
func (c *Config) environ() []string {
	base := c.base()
	env := make([]string, 0, len(base)+1+len(c.Env))
	at := make(map[string]int, len(base)+1+len(c.Env)) // name → index in env
	set := func(k, kv string) {
		if i, ok := at[k]; ok {
			env[i] = kv
			return
		}
		at[k] = len(env)
		env = append(env, kv)
	}
	for _, kv := range base {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" {
			set(k, kv)
		}
	}
	set("TERM", "TERM="+DefaultTerm)
	for k, v := range c.Env {
		set(k, k+"="+v)
	}
	return env
}

// base is the environment cfg.Env is merged over.
func (c *Config) base() []string {
	if c.BaseEnv != nil {
		return c.BaseEnv
	}
	return os.Environ()
}

// resolve finds the executable for cfg.Cmd, searching the PATH the child
// will see when the name has no slash, as the C library's execvp does in
// a child given that environment (node-pty's children, a shell's): an
// environment without PATH is searched along the default path, and an
// empty entry, an empty PATH too, is the current directory. A relative
// result is relative to dir, where the child is when it calls exec (dir
// "" is our own).
func resolve(cmd string, env []string, dir string) (string, error) {
	if cmd == "" {
		return "", errors.New("command is empty")
	}
	check := func(p string) error {
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return checkExecutable(p)
	}
	if strings.Contains(cmd, "/") {
		return cmd, check(cmd)
	}
	path, set := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, set = v, true
		}
	}
	if !set {
		path = defaultPath()
	}
	// SplitList("") is no entry at all; to execvp it is one, empty.
	for _, entry := range strings.Split(path, string(filepath.ListSeparator)) {
		if entry == "" {
			entry = "."
		}
		p := filepath.Join(entry, cmd)
		if check(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: executable file not found in $PATH", cmd)
}

// defaultPath is where execvp looks for a program when the environment
// has no PATH: glibc's confstr(_CS_PATH) on Linux, _PATH_DEFPATH on macOS
// and FreeBSD.
func defaultPath() string {
	if runtime.GOOS == "linux" {
		return "/bin:/usr/bin"
	}
	return "/usr/bin:/bin"
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s: is a directory", p)
	}
	if fi.Mode()&0o111 == 0 {
		return &fs.PathError{Op: "exec", Path: p, Err: fs.ErrPermission}
	}
	return nil
}

// pixels clamps a size in pixels to 0..65535 (0: unknown).
func pixels(n int) uint16 {
	return uint16(min(max(n, 0), 65535))
}

func clampSize(n int) uint16 {
	switch {
	case n < 1:
		return 1
	case n > 65535:
		return 65535
	}
	return uint16(n)
}
