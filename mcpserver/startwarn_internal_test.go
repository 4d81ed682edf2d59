//go:build unix

package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
)

// A session start says something of on stderr although it started (here:
// its record for `ptyplex list` cannot be written, the file size limit
// standing in for a full disk) is passed on to the agent; it was dropped.
func TestStartPassesOnWarnings(t *testing.T) {
	bin, err := hosttest.Binary("./cmd/ptyplex")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "ptyplex")
	script := "#!/bin/sh\nulimit -f 0\nexec '" + bin + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := launch(ctx, wrapper, startSpec{Command: []string{"cat"}, Env: map[string]string{"PTYPLEX_RUNTIME_DIR": dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(st.PID, syscall.SIGKILL)
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "'ptyplex list' will not show it") {
		t.Fatalf("warnings: %q", st.Warnings)
	}
}
