package ptyhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// environWindows builds the child's environment as Windows has it: ours
// (or BaseEnv), then TERM=DefaultTerm, then cfg.Env, as on Unix; names
// are case-insensitive, so "Path" from our environment and "PATH" from
// cfg.Env are one variable (the later value wins, the first spelling
// stays). Two names in cfg.Env that are one variable are applied in the
// order of EnvOrder (the host's), else in byte order, so the same OPEN
// always gives the same environment. The drive-letter entries
// ("=C:=C:\work") that cmd.exe keeps are passed on untouched.
func (c *Config) environWindows() []string {
	base := c.base()
	env := make([]string, 0, len(base)+1+len(c.Env))
	at := make(map[string]int, len(base)+1+len(c.Env))
	set := func(k, kv string) {
		key := strings.ToUpper(k)
		if i, ok := at[key]; ok {
			name, _ := envName(env[i])
			env[i] = name + kv[len(k):]
			return
		}
		at[key] = len(env)
		env = append(env, kv)
	}
	for _, kv := range base {
		if k, ok := envName(kv); ok {
			set(k, kv)
		}
	}
	set("TERM", "TERM="+DefaultTerm)
	for _, k := range c.envNames() {
		v := c.Env[k]
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			continue // CreateProcess would take it for another entry
		}
		set(k, k+"="+v)
	}
	return env
}

// envNames is the names of Env in the order they are applied: EnvOrder's
// (the host's order), then any EnvOrder left out in byte order.
func (c *Config) envNames() []string {
	names := make([]string, 0, len(c.Env))
	seen := make(map[string]bool, len(c.Env))
	for _, k := range c.EnvOrder {
		if _, ok := c.Env[k]; ok && !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	rest := len(names)
	for k := range c.Env {
		if !seen[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names[rest:])
	return names
}

// envName is the name of the entry kv. A leading '=' belongs to the name
// (the hidden per-drive directories "=C:").
func envName(kv string) (string, bool) {
	if len(kv) < 2 {
		return "", false
	}
	i := strings.IndexByte(kv[1:], '=')
	if i < 0 {
		return "", false
	}
	return kv[:i+1], true
}

// envValue is the value of name in env, matched without regard to case.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, ok := envName(kv); ok && strings.EqualFold(k, name) {
			v = kv[len(k)+1:]
		}
	}
	return v
}

// resolveWindows finds the program for cmd as CreateProcess would not:
// a bare name is looked up in the child's PATH (not ours), trying each
// extension of the child's PATHEXT unless the name already ends in one.
// A name with a directory part is taken relative to dir and tried with
// the extensions; failing those, a file by that very name that has an
// extension is taken as named, whatever PATHEXT holds (the host named the
// program: CreateProcess runs C:\x\tool.exe whether or not PATHEXT lists
// .exe, and says so if it cannot run it). Our own directory and the
// current directory are not searched (CreateProcess's implicit search is
// a well-known way to run a planted program).
//
// The result is absolute: CreateProcess takes a relative program name
// relative to our current directory, not to the child's, so the program
// found under dir (a cmd such as sub\tool.exe, or a relative PATH entry)
// would be looked for again beside us, and whatever is there run instead.
func resolveWindows(cmd string, env []string, dir string) (string, error) {
	if cmd == "" {
		return "", errors.New("command is empty")
	}
	exts := pathExts(env)
	abs := func(p string) string {
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		return p
	}
	try := func(p string) (string, bool) {
		full := abs(p)
		if hasExt(p, exts) {
			if isFile(full) {
				return full, true
			}
		}
		for _, e := range exts {
			if isFile(full + e) {
				return full + e, true
			}
		}
		return "", false
	}
	if strings.ContainsAny(cmd, `/\:`) {
		if p, ok := try(cmd); ok {
			return p, nil
		}
		if full := abs(cmd); filepath.Ext(cmd) != "" && isFile(full) {
			return full, nil
		}
		return "", fmt.Errorf("%s: file not found (tried the extensions of PATHEXT: %s)", cmd, strings.Join(exts, ";"))
	}
	for _, entry := range filepath.SplitList(envValue(env, "PATH")) {
		if entry == "" {
			continue
		}
		if p, ok := try(filepath.Join(entry, cmd)); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: executable file not found in %%PATH%%", cmd)
}

func pathExts(env []string) []string {
	var exts []string
	for _, e := range strings.Split(envValue(env, "PATHEXT"), ";") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		exts = append(exts, strings.ToLower(e))
	}
	if len(exts) == 0 {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

func hasExt(p string, exts []string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	for _, e := range exts {
		if ext == e {
			return true
		}
	}
	return false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
