// Package shellinteg makes bash and zsh send the OSC 133 shell-integration
// marks (prompt, command start, output start, end with exit status) that
// the session daemon turns into commands with exit codes, without touching
// the user's startup files: it writes startup files of its own into a
// private directory, which run the user's first and then add the marks,
// and points the shell at them (bash --rcfile, zsh's ZDOTDIR).
package shellinteg

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

var (
	//go:embed bash.rc
	bashRC string
	//go:embed zshenv.rc
	zshenvRC string
	//go:embed zprofile.rc
	zprofileRC string
	//go:embed zshrc.rc
	zshrcRC string
)

// Supported names the shells this package knows, for error messages.
const Supported = "bash and zsh"

// shell returns which supported shell argv runs ("bash" or "zsh"), or an
// error that names the supported ones. A login shell's "-bash" counts.
func shell(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("--shell-integration needs a shell to run (%s)", Supported)
	}
	name := strings.TrimPrefix(filepath.Base(argv[0]), "-")
	var refused []string
	switch name {
	case "bash":
		// Each of these makes bash skip the rc file we hand it, or run
		// no interactive prompt at all.
		refused = []string{"--rcfile", "--init-file", "--norc", "-l", "--login", "-c", "--posix"}
	case "zsh":
		refused = []string{"-f", "--no-rcs", "-c", "-d", "--no-globalrcs"}
	default:
		return "", fmt.Errorf("--shell-integration supports %s, not %q: run one of those, or have your program send OSC 133 marks itself", Supported, argv[0])
	}
	for _, a := range argv[1:] {
		for _, r := range refused {
			if a == r || (strings.HasPrefix(a, "--") && strings.HasPrefix(a, r+"=")) {
				return "", fmt.Errorf("--shell-integration cannot be used with %s %s: the shell would not read the startup file that adds the marks", name, a)
			}
		}
		if !strings.HasPrefix(a, "-") {
			return "", fmt.Errorf("--shell-integration needs an interactive %s, not one running %q", name, a)
		}
	}
	return name, nil
}

// Check reports whether argv is a shell Prepare supports, with the reason
// when it is not.
func Check(argv []string) error {
	_, err := shell(argv)
	return err
}

// Setup is what Prepare made: the shell's new argv and the environment to
// merge over the child's, and Dir, the private directory holding the
// generated files, for the caller to remove once the shell has read them
// (its first mark says so) and at the latest when the session ends. Key is
// the parameter every mark of the shell carries (screen.RequireMarkKey):
// the files hold it, the environment does not.
type Setup struct {
	Argv []string
	Env  map[string]string
	Dir  string
	Key  string
}

// keyPlaceholder is replaced by the session's key in the startup files.
const keyPlaceholder = "@PTYPLEX_KEY@"

// Prepare writes the startup files for the shell argv runs into a fresh
// private directory (mode 0700, files 0600) and returns how to start it.
// env is the environment the child gets over ours: getenv reads a name
// from it (for ZDOTDIR), so the user's own files are found where the
// shell would have found them.
func Prepare(argv []string, getenv func(string) (string, bool)) (Setup, error) {
	name, err := shell(argv)
	if err != nil {
		return Setup{}, err
	}
	var k [16]byte
	if _, err := rand.Read(k[:]); err != nil {
		return Setup{}, fmt.Errorf("shell integration: make its key: %w", err)
	}
	key := hex.EncodeToString(k[:])
	dir, err := os.MkdirTemp("", "ptyplex-shell-")
	if err != nil {
		return Setup{}, fmt.Errorf("shell integration: create its directory: %w", err)
	}
	fail := func(err error) (Setup, error) {
		os.RemoveAll(dir)
		return Setup{}, fmt.Errorf("shell integration: %w", err)
	}
	write := func(file, text string) error {
		text = strings.ReplaceAll(text, keyPlaceholder, key)
		return os.WriteFile(filepath.Join(dir, file), []byte(text), 0o600)
	}
	s := Setup{Dir: dir, Env: map[string]string{}, Key: key}
	switch name {
	case "bash":
		rc := filepath.Join(dir, "bashrc")
		if err := write("bashrc", bashRC); err != nil {
			return fail(err)
		}
		s.Argv = append([]string{argv[0], "--rcfile", rc}, argv[1:]...)
	case "zsh":
		for file, text := range map[string]string{".zshenv": zshenvRC, ".zprofile": zprofileRC, ".zshrc": zshrcRC} {
			if err := write(file, text); err != nil {
				return fail(err)
			}
		}
		if orig, ok := getenv("ZDOTDIR"); ok {
			s.Env["PTYPLEX_USER_ZDOTDIR"] = orig
		}
		s.Env["ZDOTDIR"] = dir
		s.Argv = append([]string(nil), argv...)
	}
	return s, nil
}
