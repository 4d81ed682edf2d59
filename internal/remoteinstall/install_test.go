package remoteinstall

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// local runs the "remote" side on this machine: sh -c SCRIPT is what ssh
// HOST SCRIPT does there.
var local = []string{"sh", "-c"}

// fakeBinaries writes stand-ins that print a --version line of version,
// with tag making builds of the same version differ.
func fakeBinaries(t *testing.T, version, tag string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range Names {
		script := fmt.Sprintf("#!/bin/sh\n# %s\necho '%s %s (commit x, %s/%s, native backend)'\n", tag, n, version, runtime.GOOS, runtime.GOARCH)
		if err := testproc.WriteExecutable(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestInstallReplacesOnlyItsOwnFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "it's home") // a quote and a space for the quoting
	a := fakeBinaries(t, "v1.0.0", "build a")
	res, err := Install(Options{Transport: local, Dir: root, LocalDir: a, Version: "v1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Copied) != 2 || !strings.HasPrefix(res.Reported, "ptyplex-sidecar v1.0.0 ") {
		t.Fatalf("first install: %+v", res)
	}
	dir := filepath.Join(root, "v1.0.0")
	same := func(n, src string) bool {
		x, _ := os.ReadFile(filepath.Join(dir, n))
		y, _ := os.ReadFile(filepath.Join(src, n))
		return string(x) == string(y)
	}

	res, err = Install(Options{Transport: local, Dir: root, LocalDir: a, Version: "v1.0.0"})
	if err != nil || len(res.Copied) != 0 {
		t.Fatalf("the same again: %+v, %v", res, err)
	}

	// Another build of the same version replaces what the first wrote.
	b := fakeBinaries(t, "v1.0.0", "build b")
	if res, err = Install(Options{Transport: local, Dir: root, LocalDir: b, Version: "v1.0.0"}); err != nil || len(res.Copied) != 2 {
		t.Fatalf("another build: %+v, %v", res, err)
	}
	if !same("ptyplex", b) || !same("ptyplex-sidecar", b) {
		t.Fatal("another build of ours was not replaced")
	}

	// Once someone changed a file it is not ours any more.
	edited := []byte("#!/bin/sh\necho edited by hand\n")
	if err := testproc.WriteExecutable(filepath.Join(dir, "ptyplex"), edited, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Install(Options{Transport: local, Dir: root, LocalDir: a, Version: "v1.0.0"})
	if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "refusing to replace") {
		t.Fatalf("over an edited file: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "ptyplex")); string(got) != string(edited) {
		t.Fatal("the edited file was replaced")
	}
}

func TestInstallChecksVersion(t *testing.T) {
	wrong := fakeBinaries(t, "v0.9.0", "old")
	_, err := Install(Options{Transport: local, Dir: t.TempDir(), LocalDir: wrong, Version: "v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), `--version printed "ptyplex-sidecar v0.9.0`) {
		t.Fatalf("binaries of another version: %v", err)
	}
}

func TestInstallRefusesPlantedManifest(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "v1.0.0")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, Manifest), []byte("not a manifest\n"), 0o644)
	_, err := Install(Options{Transport: local, Dir: root, LocalDir: fakeBinaries(t, "v1.0.0", "x"), Version: "v1.0.0"})
	if !errors.Is(err, ErrNotOurs) {
		t.Fatalf("over a planted manifest: %v", err)
	}
}

func TestPlatform(t *testing.T) {
	for in, want := range map[string]string{
		"Linux x86_64\n": "linux/amd64", "Linux aarch64": "linux/arm64", "Darwin arm64": "darwin/arm64",
		"FreeBSD amd64": "freebsd/amd64", "Plan9 mips": "error", "": "error", "Linux x86_64 extra": "error",
	} {
		os, arch, err := platform([]byte(in))
		got := os + "/" + arch
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("platform(%q) = %s (%v), want %s", in, got, err, want)
		}
	}
}

func TestRemoteRoot(t *testing.T) {
	for in, want := range map[string]string{
		"": `"$HOME"/.ptyplex`, "~": `"$HOME"`, "~/x y": `"$HOME"/'x y'`, "/opt/p": "/opt/p", "/a'b": `'/a'\''b'`, "$(reboot)": `'$(reboot)'`,
	} {
		if got := remoteRoot(in); got != want {
			t.Errorf("remoteRoot(%q) = %s, want %s", in, got, want)
		}
	}
}
