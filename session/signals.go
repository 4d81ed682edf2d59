package session

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ParseSignal accepts a signal name with or without the SIG prefix, in any
// case ("SIGTERM", "term"), or a number ("15"), and returns the signal and
// its canonical name. Signal 0 and numbers outside 1..64 are invalid.
func ParseSignal(s string) (syscall.Signal, string, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(t); err == nil {
		if n < 1 || n > 64 {
			return 0, "", requestError("Invalid signal: " + s)
		}
		sig := syscall.Signal(n)
		name := unix.SignalName(sig)
		if name == "" {
			name = "SIG" + t // real-time signals have no name
		}
		return sig, name, nil
	}
	if !strings.HasPrefix(t, "SIG") {
		t = "SIG" + t
	}
	sig := unix.SignalNum(t)
	if sig == 0 {
		return 0, "", requestError("Invalid signal: " + s)
	}
	return sig, t, nil
}
