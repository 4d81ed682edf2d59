//go:build unix

package signame

import (
	"errors"
	"syscall"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sig  syscall.Signal
		name string // "" means the input is refused
	}{
		{"SIGTERM", syscall.SIGTERM, "SIGTERM"},
		{"TERM", syscall.SIGTERM, "SIGTERM"},
		{"term", syscall.SIGTERM, "SIGTERM"},
		{" sigint ", syscall.SIGINT, "SIGINT"},
		{"15", syscall.SIGTERM, "SIGTERM"},
		{"9", syscall.SIGKILL, "SIGKILL"},
		{"KILL", syscall.SIGKILL, "SIGKILL"},
		{"2", syscall.SIGINT, "SIGINT"},
		{"HUP", syscall.SIGHUP, "SIGHUP"},
		{"1", syscall.SIGHUP, "SIGHUP"},
		{"QUIT", syscall.SIGQUIT, "SIGQUIT"},
		{"USR1", syscall.SIGUSR1, "SIGUSR1"},
		{"SIGUSR2", syscall.SIGUSR2, "SIGUSR2"},
		{"WINCH", syscall.SIGWINCH, "SIGWINCH"},
		{"NOTASIGNAL", 0, ""},
		{"0", 0, ""},
		{"65", 0, ""},
		{"9999", 0, ""},
		{"-1", 0, ""},
		{"", 0, ""},
		{"SIG", 0, ""},
		{"1.5", 0, ""},
	} {
		sig, name, err := Parse(tc.in)
		if tc.name == "" {
			if !errors.Is(err, ErrInvalid) || err.Error() != "Invalid signal: "+tc.in {
				t.Errorf("Parse(%q) = %v, %q, %v; want the error Invalid signal: %s", tc.in, sig, name, err, tc.in)
			}
			continue
		}
		if err != nil || sig != tc.sig || name != tc.name {
			t.Errorf("Parse(%q) = %v, %q, %v; want %v, %q", tc.in, sig, name, err, tc.sig, tc.name)
		}
	}
}

func TestParseSession(t *testing.T) {
	for _, in := range []string{"SIGTERM", "term", "KILL", "sigint", "HUP", "QUIT", "USR1", "SIGUSR2", "9", "15", "19", "64", "+9"} {
		want, wantName, _ := Parse(in)
		sig, name, err := ParseSession(in)
		if err != nil || sig != want || name != wantName {
			t.Errorf("ParseSession(%q) = %v, %q, %v; want %v, %q", in, sig, name, err, want, wantName)
		}
	}
	for _, in := range []string{"STOP", "SIGCONT", "winch", "SIGALRM", " 9", "9 ", " sigint ", "NOTASIGNAL", "9999", "0", "", "SIG"} {
		if _, _, err := ParseSession(in); !errors.Is(err, ErrInvalid) || err.Error() != "Invalid signal: "+in {
			t.Errorf("ParseSession(%q) = %v; want the error Invalid signal: %s", in, err, in)
		}
	}
}
