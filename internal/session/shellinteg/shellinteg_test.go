package shellinteg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareBash(t *testing.T) {
	s, err := Prepare([]string{"/bin/bash", "-i"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(s.Dir)
	fi, err := os.Stat(s.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory %s: %v %v", s.Dir, fi.Mode(), err)
	}
	rc := filepath.Join(s.Dir, "bashrc")
	if strings.Join(s.Argv, " ") != "/bin/bash --rcfile "+rc+" -i" {
		t.Fatalf("argv %q", s.Argv)
	}
	fi, err = os.Stat(rc)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rc file: %v %v", fi.Mode(), err)
	}
}

func TestPrepareZshKeepsUserZdotdir(t *testing.T) {
	s, err := Prepare([]string{"zsh"}, func(n string) (string, bool) { return "/home/u/zsh", n == "ZDOTDIR" })
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(s.Dir)
	if s.Env["ZDOTDIR"] != s.Dir || s.Env["PTYPLEX_USER_ZDOTDIR"] != "/home/u/zsh" {
		t.Fatalf("env %v", s.Env)
	}
	for _, f := range []string{".zshenv", ".zprofile", ".zshrc"} {
		if _, err := os.Stat(filepath.Join(s.Dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRefused(t *testing.T) {
	for _, argv := range [][]string{{"fish"}, {"sh"}, {"bash", "--norc"}, {"bash", "--rcfile=x"}, {"bash", "-l"}, {"bash", "script.sh"}, {"zsh", "-f"}, {}} {
		if err := Check(argv); err == nil {
			t.Errorf("%q accepted", argv)
		} else if !strings.Contains(err.Error(), "--shell-integration") {
			t.Errorf("%q: %v does not name the flag", argv, err)
		}
	}
	for _, argv := range [][]string{{"bash"}, {"/usr/bin/zsh"}, {"-bash"}, {"bash", "-i"}} {
		if err := Check(argv); err != nil {
			t.Errorf("%q: %v", argv, err)
		}
	}
}

func TestPrepareRefusesWhatCheckRefuses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, argv := range [][]string{{"fish"}, {"bash", "--norc"}, {"zsh", "-c", "true"}, {}} {
		if _, err := Prepare(argv, func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "--shell-integration") {
			t.Errorf("%q: %v", argv, err)
		}
	}
	// Nothing is left behind for a refused shell.
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Errorf("temporary directory after refusals: %v %v", ents, err)
	}
}

func TestPrepareNoTempDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	t.Setenv("TMPDIR", missing)
	_, err := Prepare([]string{"bash"}, func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "shell integration: create its directory") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("err %v, want one naming the directory it could not create in", err)
	}
}

func TestPrepareKeyInFilesOnly(t *testing.T) {
	s, err := Prepare([]string{"zsh", "-i"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(s.Dir)
	if len(s.Key) != 32 || strings.Trim(s.Key, "0123456789abcdef") != "" {
		t.Fatalf("key %q: want 32 hex digits", s.Key)
	}
	// Without a ZDOTDIR of the user's there is none to hand on.
	if _, ok := s.Env["PTYPLEX_USER_ZDOTDIR"]; ok || s.Env["ZDOTDIR"] != s.Dir || len(s.Env) != 1 {
		t.Fatalf("env %v", s.Env)
	}
	if strings.Join(s.Argv, " ") != "zsh -i" {
		t.Fatalf("argv %q", s.Argv)
	}
	for k, v := range s.Env {
		if strings.Contains(v, s.Key) {
			t.Errorf("environment %s carries the key", k)
		}
	}
	rc, err := os.ReadFile(filepath.Join(s.Dir, ".zshrc"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rc), s.Key) || strings.Contains(string(rc), keyPlaceholder) {
		t.Errorf(".zshrc does not carry the key in place of %s", keyPlaceholder)
	}
	// Each session gets its own key.
	s2, err := Prepare([]string{"bash"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(s2.Dir)
	if s2.Key == s.Key || s2.Dir == s.Dir {
		t.Errorf("two sessions share key or directory: %s %s", s.Key, s.Dir)
	}
	brc, err := os.ReadFile(filepath.Join(s2.Dir, "bashrc"))
	if err != nil || !strings.Contains(string(brc), s2.Key) || strings.Contains(string(brc), keyPlaceholder) {
		t.Errorf("bashrc does not carry the key: %v", err)
	}
}
