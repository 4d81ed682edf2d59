//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package signame

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRealTimeNamesAreKillLs: every signal 1..64 has the name bash's
// kill -l gives it (SIGRTMIN+3 for 37), and each name reads back as its
// number.
func TestRealTimeNamesAreKillLs(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	for n := 1; n <= 64; n++ {
		out, err := exec.Command(bash, "-c", "kill -l "+strconv.Itoa(n)).Output()
		want := ""
		if name := strings.TrimSpace(string(out)); err == nil && name != "" {
			want = "SIG" + name
		}
		switch want {
		case "SIGPOLL":
			want = "SIGIO" // one number, two names; Go's is SIGIO
		case "SIGIOT":
			want = "SIGABRT"
		}
		if got := Name(syscall.Signal(n)); got != want {
			t.Errorf("Name(%d) = %q; kill -l says %q", n, got, want)
		}
		if want == "" {
			continue
		}
		sig, name, err := Parse(want)
		if err != nil || int(sig) != n || name != want {
			t.Errorf("Parse(%q) = %v, %q, %v; want %d", want, sig, name, err, n)
		}
		if _, name, _ := Parse(strconv.Itoa(n)); name != want {
			t.Errorf("Parse(%d) named %q, want %q", n, name, want)
		}
	}
}

func TestParseRealTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sig  syscall.Signal
		name string // "" means the input is refused
	}{
		{"SIGRTMIN", 34, "SIGRTMIN"},
		{"rtmin", 34, "SIGRTMIN"},
		{"RTMIN+0", 34, "SIGRTMIN"},
		{"SIGRTMIN+3", 37, "SIGRTMIN+3"},
		{"sigrtmin+15", 49, "SIGRTMIN+15"},
		{"SIGRTMIN+20", 54, "SIGRTMAX-10"},
		{"SIGRTMIN+30", 64, "SIGRTMAX"},
		{"SIGRTMAX", 64, "SIGRTMAX"},
		{"RTMAX-1", 63, "SIGRTMAX-1"},
		{"SIGRTMAX-14", 50, "SIGRTMAX-14"},
		{"SIGRTMAX-30", 34, "SIGRTMIN"},
		{"37", 37, "SIGRTMIN+3"},
		{"32", 32, "SIG32"}, // glibc's own: no name
		{"33", 33, "SIG33"},
		{"SIGRTMIN+31", 0, ""},
		{"SIGRTMAX-31", 0, ""},
		{"SIGRTMIN-1", 0, ""},
		{"SIGRTMAX+1", 0, ""},
		{"SIGRTMIN+", 0, ""},
		{"SIGRTMIN++3", 0, ""},
		{"SIGRTMIN+ 3", 0, ""},
		{"SIGRTMIN+003", 0, ""},
		{"SIGRTMIN3", 0, ""},
		{"SIGRT", 0, ""},
	} {
		sig, name, err := Parse(tc.in)
		if tc.name == "" {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) = %v, %q, %v; want Invalid signal", tc.in, sig, name, err)
			}
			continue
		}
		if err != nil || sig != tc.sig || name != tc.name {
			t.Errorf("Parse(%q) = %v, %q, %v; want %v, %q", tc.in, sig, name, err, tc.sig, tc.name)
		}
	}
}
