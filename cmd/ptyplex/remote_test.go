//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/sshtest"
)

// remote install to a real sshd on 127.0.0.1: installs, does nothing the
// second time, and refuses to replace a file it did not write.
func TestRemoteInstall(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	// make release's layout, for this platform.
	from := t.TempDir()
	plat := filepath.Join(from, runtime.GOOS+"-"+runtime.GOARCH)
	if err := os.Mkdir(plat, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"ptyplex": bin, "ptyplex-sidecar": sidecar} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plat, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ssh := srv.Command(false)
	install := func(root string) result {
		return ptyplex(t, "", append([]string{"remote", "install", "--from", from, "--dir", root, "--"}, ssh...)...)
	}

	// The version directory is named after the version the binaries
	// report: "dev-HASH" for a build without one (a worktree, make's
	// -ldflags aside), else the version (a clone's module pseudo-version).
	ver := "dev"
	if f := strings.Fields(ptyplex(t, "", "--version").stdout); len(f) > 1 {
		ver = f[1]
	}
	dirGlob := ver
	if ver == "dev" {
		dirGlob = "dev-*"
	}
	root := filepath.Join(t.TempDir(), "remote home", ".ptyplex") // a space, to test the quoting
	r := install(root)
	if r.code != 0 {
		t.Fatalf("first install: %v", r)
	}
	path := strings.TrimSpace(r.stdout)
	if ok, _ := filepath.Match("'"+root+"'/"+dirGlob+"/ptyplex-sidecar", path); !ok {
		t.Fatalf("install printed %q, want the sidecar under %s/%s", path, root, dirGlob)
	}
	if !strings.Contains(r.stderr, "installed ptyplex-sidecar and ptyplex") || !strings.Contains(r.stderr, "ptyplex-sidecar "+ver) {
		t.Fatalf("first install did not say what it installed: %v", r)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, dirGlob))
	if len(dirs) != 1 {
		t.Fatalf("want one version directory under %s, have %v", root, dirs)
	}
	for _, n := range []string{"ptyplex", "ptyplex-sidecar"} {
		got, err := os.ReadFile(filepath.Join(dirs[0], n))
		want, _ := os.ReadFile(filepath.Join(plat, n))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s on the other side differs from the one sent (%v)", n, err)
		}
	}
	// The installed sidecar is one a host can reach.
	if out := hostRun(t, append(ssh, path+" --version")); !strings.HasPrefix(out, "ptyplex-sidecar ") {
		t.Fatalf("installed sidecar --version: %q", out)
	}
	st, _ := os.Stat(filepath.Join(dirs[0], "ptyplex-sidecar"))

	// Again: a no-op.
	r = install(root)
	if r.code != 0 || !strings.Contains(r.stderr, "already installed") || strings.TrimSpace(r.stdout) != path {
		t.Fatalf("second install: %v", r)
	}
	if st2, _ := os.Stat(filepath.Join(dirs[0], "ptyplex-sidecar")); !os.SameFile(st, st2) || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatal("the second install replaced the sidecar")
	}

	// A planted file where the sidecar goes is left alone.
	planted := filepath.Join(t.TempDir(), "other")
	verDir := filepath.Join(planted, filepath.Base(dirs[0]))
	if err := os.MkdirAll(verDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(verDir, "ptyplex-sidecar"), []byte("#!/bin/sh\necho not yours\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = install(planted)
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to replace") || !strings.Contains(r.stderr, "not written by ptyplex remote install") {
		t.Fatalf("install over a planted file: %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(verDir, "ptyplex-sidecar")); string(b) != "#!/bin/sh\necho not yours\n" {
		t.Fatal("the planted file was changed")
	}
	if _, err := os.Stat(filepath.Join(verDir, "ptyplex")); err == nil {
		t.Fatal("install went on after refusing")
	}
}

func TestRemoteInstallUsage(t *testing.T) {
	t.Parallel()
	if r := ptyplex(t, "", "remote", "install"); r.code != 2 || !strings.Contains(r.stderr, "want one [user@]host") {
		t.Fatalf("no host: %v", r)
	}
	if r := ptyplex(t, "", "remote", "install", "--from", t.TempDir(), "--", "sh", "-c", "echo Plan9 mips", "x"); r.code != 1 ||
		!strings.Contains(r.stderr, "no ptyplex build for Plan9 mips") {
		t.Fatalf("unknown platform: %v", r)
	}
	// A --from that names no directory is refused before the other machine
	// is asked anything (with the version installed there already it was
	// never read, and the install said it succeeded).
	mark := filepath.Join(t.TempDir(), "transport-ran")
	if r := ptyplex(t, "", "remote", "install", "--from", "/nonexistent", "--", "sh", "-c", "echo > "+mark); r.code != 1 ||
		!strings.Contains(r.stderr, "--from /nonexistent") {
		t.Fatalf("--from a missing directory: %v", r)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the transport was run for a --from that names nothing")
	}
	// The help lists the subcommand and its flags once, under one usage
	// (it printed an empty "flags:" heading, or the flags under a second
	// "Usage of ..." header).
	for _, args := range [][]string{{"remote", "--help"}, {"remote", "install", "--help"}, {"help", "remote"}} {
		r := ptyplex(t, "", args...)
		if r.code != 0 || strings.Count(r.stdout, "Usage") != 1 || strings.Contains(r.stdout, "Usage of") ||
			!strings.Contains(r.stdout, "  install ") || strings.Count(r.stdout, "\n  -dir DIR\n") != 1 ||
			strings.Count(r.stdout, "\n  -from DIR\n") != 1 || strings.Count(r.stdout, "\n  -q\t") != 1 {
			t.Errorf("%v: %v", args, r)
		}
	}
	// Wrong command lines: an error line, the synopsis, exit 2, no heading
	// without flags under it.
	for _, args := range [][]string{{"remote"}, {"remote", "nope"}, {"remote", "install"}, {"remote", "install", "--bogus"}} {
		r := ptyplex(t, "", args...)
		if r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "Error: ") || !strings.Contains(r.stderr, "Usage: ptyplex remote install") ||
			strings.Contains(r.stderr, "flags:") {
			t.Errorf("%v: %v", args, r)
		}
	}
}

func hostRun(t *testing.T, argv []string) string {
	t.Helper()
	out, err := execCommand(argv).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return string(out)
}

func execCommand(argv []string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
