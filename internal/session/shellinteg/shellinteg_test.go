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
