package signame

import (
	"errors"
	"syscall"
	"testing"
)

// TestWindowsNames: the names the SIGNAL frame takes on Windows, with
// SIGBREAK (Windows' 21, which node's kill sends there) among them, and
// names Windows has no number for refused.
func TestWindowsNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sig  syscall.Signal
		name string
	}{
		{"SIGINT", 2, "SIGINT"},
		{"term", 15, "SIGTERM"},
		{"SIGBREAK", 21, "SIGBREAK"},
		{"break", 21, "SIGBREAK"},
		{"21", 21, "SIGBREAK"},
		{"SIGWINCH", 28, "SIGWINCH"},
	} {
		sig, name, err := Parse(tc.in)
		if err != nil || sig != tc.sig || name != tc.name {
			t.Errorf("Parse(%q) = %v, %q, %v; want %v, %q", tc.in, sig, name, err, tc.sig, tc.name)
		}
	}
	for _, in := range []string{"SIGTTIN", "SIGRTMIN", "SIGNOPE"} {
		if _, _, err := Parse(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q): %v, want Invalid signal", in, err)
		}
	}
}
