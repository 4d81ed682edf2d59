//go:build unix

package persist

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestReadBuildInfoAsTheRuntimeSaysIt: readBuildInfo finds in this test
// binary's file the very build information the runtime reports for it,
// and in gofmt's its own; a script, a file without the blob and a blob
// that is cut short are refused.
func TestReadBuildInfoAsTheRuntimeSaysIt(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBuildInfo(data)
	if err != nil {
		t.Fatalf("this test binary: %v", err)
	}
	want, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("the runtime has no build information for this test binary")
	}
	if got.String() != want.String() {
		t.Errorf("read from the file:\n%s\nthe runtime says:\n%s", got, want)
	}

	gofmt, err := exec.LookPath(filepath.Join(runtime.GOROOT(), "bin", "gofmt"))
	if err != nil {
		t.Fatalf("a Go program that is not ours: %v", err)
	}
	g, err := os.ReadFile(gofmt)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := readBuildInfo(g); err != nil || info.Path != "cmd/gofmt" || !strings.HasPrefix(info.GoVersion, "go") {
		t.Errorf("gofmt: %v, %+v", err, info)
	}

	at := bytes.Index(data, []byte("\xff Go buildinf:"))
	for at%16 != 0 {
		at += 1 + bytes.Index(data[at+1:], []byte("\xff Go buildinf:"))
	}
	for name, b := range map[string][]byte{
		"a script":         []byte("#!/bin/sh\n" + string(data[at:at+4096])),
		"no blob":          bytes.ReplaceAll(data, []byte("\xff Go buildinf:"), []byte("\xff Go buildinf?")),
		"a blob cut short": data[:at+40],
		"nothing":          nil,
	} {
		if info, err := readBuildInfo(b); err == nil {
			t.Errorf("%s: read %+v, want a refusal", name, info)
		}
	}
}
