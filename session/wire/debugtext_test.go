//go:build unix

package wire

import (
	"strings"
	"testing"
)

// TestDebugTextFlags: the flags line lists the set flags, and is left out
// when none is set (as interminai prints it).
func TestDebugTextFlags(t *testing.T) {
	d := DebugData{Termios: &TermiosInfo{Mode: "raw", Flags: []string{"OPOST"}}}
	if got := d.Text(); !strings.Contains(got, "\n  Flags: OPOST\n") {
		t.Errorf("with a flag:\n%s", got)
	}
	d.Termios.Flags = nil
	if got := d.Text(); strings.Contains(got, "Flags:") {
		t.Errorf("with no flag set, a flags line:\n%s", got)
	}
}
