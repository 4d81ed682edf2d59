// Package signame reads a signal given by name or number, the one parser
// behind the session protocol's KILL, the CLI and MCP kill commands and
// the sidecar's SIGNAL frame, so they all accept the same spellings.
package signame

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// ErrInvalid is wrapped by every error Parse returns. Its text, followed
// by the input, is the session protocol's answer to a bad KILL, which
// interminai's clients match.
var ErrInvalid = errors.New("Invalid signal")

// Parse accepts a signal name with or without the SIG prefix, in any case
// ("SIGTERM", "term"), or a number ("15"), and returns the signal and its
// canonical name. Signal 0 (which delivers nothing) and numbers outside
// 1..64 (beyond the real-time range) are invalid. On Linux the real-time
// signals 34..64 have kill -l's names (SIGRTMIN, SIGRTMIN+3, SIGRTMAX-2),
// and any SIGRTMIN+n or SIGRTMAX-n in that range is read; a number with
// no name (32 and 33 there, glibc's own) is named SIG32.
func Parse(s string) (syscall.Signal, string, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(t); err == nil {
		if n < 1 || n > 64 {
			return 0, "", fmt.Errorf("%w: %s", ErrInvalid, s)
		}
		sig := syscall.Signal(n)
		name := signalName(sig)
		if name == "" {
			name = "SIG" + t
		}
		return sig, name, nil
	}
	if !strings.HasPrefix(t, "SIG") {
		t = "SIG" + t
	}
	sig := signalNum(t)
	if sig == 0 {
		return 0, "", fmt.Errorf("%w: %s", ErrInvalid, s)
	}
	// SIGRTMIN+20 is named as kill -l names 54: SIGRTMAX-10.
	if name := signalName(sig); name != "" {
		t = name
	}
	return sig, t, nil
}

// sessionNames are the names the session face (its KILL request, the
// CLI's kill, the MCP tool) takes: interminai's seven, the ones its
// clients are written against. Any other signal is given by number.
var sessionNames = map[string]bool{
	"SIGHUP": true, "SIGINT": true, "SIGQUIT": true, "SIGKILL": true,
	"SIGTERM": true, "SIGUSR1": true, "SIGUSR2": true,
}

// ParseSession is Parse as the session face reads a signal: a number, or
// one of interminai's seven names with or without the SIG prefix in any
// case; nothing around it. "STOP" and " 9" are refused there ("+9" is
// not: interminai reads numbers as Rust does).
func ParseSession(s string) (syscall.Signal, string, error) {
	t := strings.ToUpper(s)
	if t == "" || t != strings.TrimSpace(t) {
		return 0, "", fmt.Errorf("%w: %s", ErrInvalid, s)
	}
	if _, err := strconv.Atoi(t); err != nil {
		if !strings.HasPrefix(t, "SIG") {
			t = "SIG" + t
		}
		if !sessionNames[t] {
			return 0, "", fmt.Errorf("%w: %s", ErrInvalid, s)
		}
	}
	return Parse(s)
}

// Name is sig's conventional name ("SIGKILL", "SIGRTMIN+3" on Linux), or
// "" for a number that has none: the name EXIT's signal field carries.
func Name(sig syscall.Signal) string {
	if sig == 0 {
		return ""
	}
	return signalName(sig)
}
