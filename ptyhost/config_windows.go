package ptyhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// environWindows builds the child's environment as Windows has it: names
// are case-insensitive, so "Path" from our environment and "PATH" from
// cfg.Env are one variable (the later value wins, the first spelling
// stays). The drive-letter entries ("=C:=C:\work") that cmd.exe keeps are
// passed on untouched.
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
	if _, ok := at["TERM"]; !ok {
		set("TERM", "TERM="+DefaultTerm)
	}
	for k, v := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			continue // CreateProcess would take it for another entry
		}
		set(k, k+"="+v)
	}
	return env
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
// A name with a directory part is taken relative to dir and only tried
// with the extensions. Our own directory and the current directory are
// not searched (CreateProcess's implicit search is a well-known way to
// run a planted program).
func resolveWindows(cmd string, env []string, dir string) (string, error) {
	if cmd == "" {
		return "", errors.New("command is empty")
	}
	exts := pathExts(env)
	try := func(p string) (string, bool) {
		full := p
		if dir != "" && !filepath.IsAbs(p) {
			full = filepath.Join(dir, p)
		}
		if hasExt(p, exts) {
			if isFile(full) {
				return p, true
			}
		}
		for _, e := range exts {
			if isFile(full + e) {
				return p + e, true
			}
		}
		return "", false
	}
	if strings.ContainsAny(cmd, `/\:`) {
		if p, ok := try(cmd); ok {
			return p, nil
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
