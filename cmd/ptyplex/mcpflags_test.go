//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestMCPNegativeIdleExitRefused: `mcp --idle-exit -5s` is a usage error
// (exit 2, saying why), as for start, not a silent "never"; 0 still
// means never and is taken.
func TestMCPNegativeIdleExitRefused(t *testing.T) {
	t.Parallel()
	r := ptyplex(t, "", "mcp", "--idle-exit", "-5s")
	if r.code != exitUsage || !strings.Contains(r.stderr, "invalid --idle-exit -5s: must not be negative") || r.stdout != "" {
		t.Errorf("mcp --idle-exit -5s: %v", r)
	}
	// With stdin at its end at once, a server that took the flag ends 0.
	if r := ptyplex(t, "", "mcp", "--idle-exit", "0"); r.code != 0 {
		t.Errorf("mcp --idle-exit 0: %v", r)
	}
}
