//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

func TestMain(m *testing.M) {
	finish := testproc.Start()
	os.Exit(finish(m.Run()))
}

// TestDemoFloodMatchesREADME: the demo runs to its end, and the flood size
// README.md gives is the one the demo reports (the README said "4 MB"
// where the demo received 3,888,895 bytes).
func TestDemoFloodMatchesREADME(t *testing.T) {
	dir := t.TempDir()
	for _, b := range [][]string{
		{"-o", filepath.Join(dir, "ptyplex-sidecar"), "github.com/ptyplex/ptyplex/cmd/ptyplex-sidecar"},
		{"-o", filepath.Join(dir, "demo"), "."},
	} {
		if out, err := exec.Command("go", append([]string{"build"}, b...)...).CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", b, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "demo"), "-sidecar", filepath.Join(dir, "ptyplex-sidecar"))
	testproc.TieToParent(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the demo: %v\n%s", err, out)
	}
	got := regexp.MustCompile(`done: (\d+) bytes in \d+ reads, last line "500000"`).FindSubmatch(out)
	if got == nil {
		t.Fatalf("the demo did not report the flood's end:\n%s", out)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	said := regexp.MustCompile("`seq 1 500000` \\(([0-9,]+) bytes").FindSubmatch(readme)
	if said == nil {
		t.Fatal("README.md no longer names the demo's flood size as \"`seq 1 500000` (N bytes\"")
	}
	if strings.ReplaceAll(string(said[1]), ",", "") != string(got[1]) {
		t.Errorf("README.md says the flood is %s bytes; the demo received %s", said[1], got[1])
	}
}
