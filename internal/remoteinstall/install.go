// Package remoteinstall puts ptyplex-sidecar and ptyplex on another machine
// through a transport command (ssh): it asks the other side for its OS and
// architecture, picks the matching binaries from `make release` output (or
// the running ones, when the platforms match), copies them into a
// per-version directory under the remote home, checks their SHA-256 and
// --version there, and never overwrites a file it did not write itself.
package remoteinstall

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ptyplex/ptyplex/internal/cescape"
)

// Names are the binaries installed, in the order they are copied.
var Names = []string{"ptyplex-sidecar", "ptyplex"}

// Manifest is the file in the version directory that lists what this
// package wrote there, one "sha256  name" line per file. A file is only
// replaced when it still has the hash the manifest gives it.
const Manifest = ".ptyplex-install"

// Options describe one installation.
type Options struct {
	// Transport runs a shell command line on the other machine when the
	// line is appended as its last argument: {"ssh", "user@host"}.
	Transport []string
	// Dir is the installation root on the other machine; "" means
	// ~/.ptyplex. A leading "~/" is the remote home.
	Dir string
	// From holds `make release` output: FROM/<os>-<arch>/<name>. When a
	// platform has no directory there and it is our own, the binaries
	// next to the running executable are used (LocalDir).
	From string
	// LocalDir is where this platform's binaries are; "" means the
	// directory of the running executable.
	LocalDir string
	// Version names the directory: the version of the binaries. "" means
	// the version the installed ptyplex-sidecar reports is not checked
	// and the directory is named by the binaries' hash.
	Version string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Result says what Install did.
type Result struct {
	OS, Arch string
	Dir      string   // the version directory on the other machine, as a remote shell word ("~/" for the home)
	Copied   []string // the names copied; empty when everything was in place
	Sidecar  string   // the installed sidecar's path, for a transport command
	Reported string   // what the installed sidecar's --version printed
}

// ErrNotOurs is wrapped by the refusal to replace a file this package did
// not write.
var ErrNotOurs = errors.New("not written by ptyplex remote install")

// Install installs o's binaries on the machine o.Transport reaches.
func Install(o Options) (*Result, error) {
	if len(o.Transport) == 0 || o.Transport[0] == "" {
		return nil, errors.New("remote install: no transport command")
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	out, err := run(o.Transport, "uname -sm", nil)
	if err != nil {
		return nil, fmt.Errorf("remote install: asking the other side for its platform (uname -sm): %w", err)
	}
	goos, goarch, err := platform(out)
	if err != nil {
		return nil, fmt.Errorf("remote install: %w", err)
	}
	logf("the other side is %s/%s", goos, goarch)
	src, err := sources(o, goos, goarch)
	if err != nil {
		return nil, fmt.Errorf("remote install: %w", err)
	}
	files := map[string][]byte{}
	sums := map[string]string{}
	all := sha256.New()
	for _, n := range Names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			return nil, fmt.Errorf("remote install: the %s/%s binaries: %w", goos, goarch, err)
		}
		files[n] = b
		s := sha256.Sum256(b)
		sums[n] = hex.EncodeToString(s[:])
		all.Write(s[:])
	}
	ver := o.Version
	if ver == "" || ver == "dev" {
		// Unreleased builds differ without saying so: name them by content.
		ver = "dev-" + hex.EncodeToString(all.Sum(nil))[:12]
	}
	if strings.ContainsAny(ver, "/\x00") || ver == "." || ver == ".." {
		return nil, fmt.Errorf("remote install: version %q cannot name a directory", ver)
	}
	root := remoteRoot(o.Dir)
	dir := root + "/" + shellQuote(ver)
	// Shown as the remote shell reads it unquoted: "~/" for the home.
	shown := strings.Replace(dir, `"$HOME"/`, "~/", 1)
	res := &Result{OS: goos, Arch: goarch, Dir: shown, Sidecar: shown + "/ptyplex-sidecar"}

	// What is there now: each file's hash (or "-" when absent) and our
	// manifest. One round trip.
	var q strings.Builder
	q.WriteString(hashFunc)
	q.WriteString(trustFuncs)
	// New directories are the user's alone, whatever the remote umask;
	// then every directory on the way there, by the path given and by the
	// one it resolves to, must be beyond other users' reach, and the
	// directories and files reused must be the user's own.
	fmt.Fprintf(&q, "d=%s; (umask 077 && mkdir -p \"$d\") && cd \"$d\" || exit 3; "+
		`case $d in /*) l=$d;; *) l=$OLDPWD/$d;; esac; chain "$l"; chain "$(pwd -P)"; mine . d; mine .. d; `, dir)
	for _, n := range append(append([]string(nil), Names...), Manifest) {
		fmt.Fprintf(&q, "if [ -e %[1]s ] || [ -L %[1]s ]; then mine %[1]s -; printf '%%s %%s\\n' \"$(h %[1]s)\" %[1]s; else printf -- '- %%s\\n' %[1]s; fi; ", n)
	}
	q.WriteString("if [ -f " + Manifest + " ]; then cat " + Manifest + "; fi")
	out, err = run(o.Transport, q.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("remote install: looking at %s on the other side: %w", dir, err)
	}
	present, ours := parseState(out)
	var copyNames []string
	for _, n := range Names {
		have, exists := present[n]
		switch {
		case !exists:
			copyNames = append(copyNames, n)
		case have == sums[n]:
			// Already this file: nothing to do, whoever put it there.
		case ours[n] != "" && ours[n] == have:
			copyNames = append(copyNames, n) // ours, of another build
		default:
			return nil, fmt.Errorf("remote install: refusing to replace %s/%s (sha256 %s): %w; move it away or install with --dir elsewhere",
				dir, n, cescape.EscapeControls(short(have)), ErrNotOurs)
		}
	}
	if _, exists := present[Manifest]; exists && len(ours) == 0 && len(copyNames) > 0 {
		// Something by that name that lists nothing is not ours to rewrite.
		return nil, fmt.Errorf("remote install: refusing to replace %s/%s: %w; move it away or install with --dir elsewhere", dir, Manifest, ErrNotOurs)
	}
	if len(copyNames) > 0 {
		// The manifest first: a copy cut short is then still ours to
		// replace next time.
		var m strings.Builder
		for _, n := range Names {
			fmt.Fprintf(&m, "%s  %s\n", sums[n], n)
		}
		_, replace := present[Manifest]
		if err := upload(o.Transport, dir, Manifest, []byte(m.String()), 0o644, replace); err != nil {
			return nil, fmt.Errorf("remote install: %w", err)
		}
		for _, n := range copyNames {
			logf("copying %s (%d bytes, sha256 %s)", n, len(files[n]), short(sums[n]))
			_, replace := present[n]
			if err := upload(o.Transport, dir, n, files[n], 0o755, replace); err != nil {
				return nil, fmt.Errorf("remote install: %w", err)
			}
		}
		res.Copied = copyNames
	} else {
		logf("already installed in %s", dir)
	}

	// The binaries run there and are the version we meant: one command for
	// all of them, since each transport command is a login (an ssh
	// handshake), the slowest part of an install that is already done.
	var script strings.Builder
	for _, n := range Names {
		fmt.Fprintf(&script, "%s/%s --version || { echo 'could not run %s --version' >&2; exit 6; }; ", dir, n, n)
	}
	out, err = run(o.Transport, script.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("remote install: running the binaries in %s on the other side: %w", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, n := range Names {
		line := ""
		if i < len(lines) {
			line = strings.TrimSpace(lines[i])
		}
		if !strings.HasPrefix(line, n+" ") || !strings.Contains(line, goos+"/"+goarch) ||
			(o.Version != "" && o.Version != "dev" && !strings.HasPrefix(line, n+" "+o.Version+" ")) {
			return nil, fmt.Errorf("remote install: %s/%s --version printed %q, want %s %s for %s/%s", dir, n, line, n, o.Version, goos, goarch)
		}
		if n == "ptyplex-sidecar" {
			res.Reported = line
		}
	}
	return res, nil
}

// hashFunc defines h FILE: its SHA-256 in hex, with whichever tool the
// system has (coreutils, macOS, FreeBSD).
const hashFunc = `h() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; ` +
	`elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | cut -d' ' -f1; else sha256 -q "$1"; fi; }; `

// trustFuncs defines the remote checks of who else could change what the
// install reuses. mine PATH TYPE: PATH is of TYPE (d or - as ls shows it),
// the user's, and no one else may write to it. chain PATH: PATH and every
// directory above it belong to the user or root, and a directory others
// may write to is sticky (as /tmp is), so that no one else can rename or
// replace what is in it. A refusal exits 5 with a line that says why.
const trustFuncs = `me=$(id -u); set -f; ` +
	`bad() { printf 'refusing to use %s: %s; install with --dir in a directory of your own\n' "$1" "$2" >&2; exit 5; }; ` +
	`mine() { x=$(ls -ldn "$1") || exit 5; set -- "$1" "$2" $x; ` +
	`case $3 in "$2"*) ;; l*) bad "$1" "it is a symbolic link";; *) bad "$1" "it is not a $2 entry (mode $3)";; esac; ` +
	`[ "$5" = "$me" ] || bad "$1" "it belongs to uid $5, not to you (uid $me)"; ` +
	`case $3 in ?????w*|????????w*) bad "$1" "other users may write to it (mode $3)";; esac; }; ` +
	`above() { x=$(ls -ldn "$1") || exit 5; set -- "$1" $x; ` +
	`[ "$4" = "$me" ] || [ "$4" = 0 ] || bad "$1" "it belongs to uid $4, who could replace what is in it"; ` +
	`case $2 in l*) ;; ?????w*|????????w*) case $2 in ?????????[tT]*) ;; *) bad "$1" "other users may write to it (mode $2)";; esac;; esac; }; ` +
	`chain() { p=$1; while :; do above "$p"; [ "$p" = / ] && break; p=${p%/*}; [ -n "$p" ] || p=/; done; }; `

// upload writes b to dir/name through a temporary file whose hash is
// checked on the other side before it takes the name. Without replace the
// final step is a hard link, which fails rather than overwrite a file that
// appeared meanwhile.
func upload(transport []string, dir, name string, b []byte, mode os.FileMode, replace bool) error {
	sum := sha256.Sum256(b)
	place := fmt.Sprintf(`ln "$t" %[1]s && rm -f "$t"`, name)
	if replace {
		place = fmt.Sprintf(`mv -f "$t" %s`, name)
	}
	script := hashFunc + fmt.Sprintf(`set -e; cd %s; umask 077; t=$(mktemp .ptyplex-upload.XXXXXX); trap 'rm -f "$t"' EXIT; cat > "$t"; `+
		`s=$(h "$t"); if [ "$s" != %s ]; then echo "sha256 mismatch after the copy: $s" >&2; exit 4; fi; chmod %o "$t"; %s; trap - EXIT`,
		dir, hex.EncodeToString(sum[:]), mode, place)
	if _, err := run(transport, script, b); err != nil {
		return fmt.Errorf("copying %s to %s: %w", name, dir, err)
	}
	return nil
}

// run runs script on the other side with stdin, returning its stdout.
func run(transport []string, script string, stdin []byte) ([]byte, error) {
	argv := append(append([]string(nil), transport...), script)
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		// The other side's words, escaped: a terminal showing the error
		// must not act on sequences a hostile remote put in them.
		// ssh ends its own lines with CR LF: the CR is no part of
		// the message.
		msg := cescape.EscapeLines(strings.TrimSpace(strings.ReplaceAll(errb.String(), "\r\n", "\n")))
		if msg == "" {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", err, msg)
	}
	return out.Bytes(), nil
}

// platform maps `uname -sm` to GOOS and GOARCH.
func platform(uname []byte) (string, string, error) {
	f := strings.Fields(string(uname))
	if len(f) != 2 {
		return "", "", fmt.Errorf("uname -sm printed %q, want the system and the machine", strings.TrimSpace(string(uname)))
	}
	oses := map[string]string{"Linux": "linux", "Darwin": "darwin", "FreeBSD": "freebsd"}
	arches := map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
	goos, ok1 := oses[f[0]]
	goarch, ok2 := arches[f[1]]
	if !ok1 || !ok2 {
		return "", "", fmt.Errorf("no ptyplex build for %s %s (uname -sm); ptyplex is built for Linux, macOS and FreeBSD on x86_64 and arm64", f[0], f[1])
	}
	return goos, goarch, nil
}

// sources finds the directory holding the binaries for goos/goarch.
func sources(o Options, goos, goarch string) (string, error) {
	var tried []string
	if o.From != "" {
		d := filepath.Join(o.From, goos+"-"+goarch)
		if _, err := os.Stat(filepath.Join(d, Names[0])); err == nil {
			return d, nil
		}
		tried = append(tried, d)
	}
	if goos == runtime.GOOS && goarch == runtime.GOARCH {
		d := o.LocalDir
		if d == "" {
			exe, err := os.Executable()
			if err != nil {
				return "", err
			}
			d = filepath.Dir(exe)
		}
		if _, err := os.Stat(filepath.Join(d, Names[0])); err == nil {
			return d, nil
		}
		tried = append(tried, d)
	}
	return "", fmt.Errorf("no %s/%s binaries (looked in %s): run `make release` and pass its dist directory with --from",
		goos, goarch, strings.Join(tried, ", "))
}

// parseState reads the state query's answer: "hash name" lines ("-" for
// absent), then the manifest's "hash  name" lines.
func parseState(out []byte) (present map[string]string, ours map[string]string) {
	present, ours = map[string]string{}, map[string]string{}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	n := len(Names) + 1
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if i < n {
			if f[0] != "-" {
				present[f[1]] = f[0]
			}
			continue
		}
		ours[f[1]] = f[0]
	}
	return present, ours
}

// remoteRoot is dir as a remote shell word, with ~/ as $HOME.
func remoteRoot(dir string) string {
	if dir == "" {
		dir = "~/.ptyplex"
	}
	if dir == "~" {
		return `"$HOME"`
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		return `"$HOME"/` + shellQuote(rest)
	}
	return shellQuote(dir)
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
