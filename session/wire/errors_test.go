//go:build unix

package wire

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"testing"
)

// An error answer's code maps to its sentinel through errors.Is, wrapped
// or not; an answer without a code (an older daemon, interminai) or with
// a code this client does not know matches none, and the text is the
// answer's "error" unchanged either way.
func TestDaemonErrorCode(t *testing.T) {
	for _, tc := range []struct {
		line string
		is   bool
	}{
		{`{"status":"error","error":"no marks (OSC 133)","code":"no_shell_integration"}`, true},
		{`{"status":"error","error":"no marks (OSC 133)"}`, false},
		{`{"status":"error","error":"no marks (OSC 133)","code":"something_newer"}`, false},
	} {
		sock := serveOnce(t, func(c net.Conn) {
			bufio.NewReader(c).ReadString('\n')
			c.Write([]byte(tc.line + "\n"))
		})
		err := CallData(sock, map[string]any{"type": "RUN", "command": "true"}, nil)
		if got := errors.Is(err, ErrNoShellIntegration); got != tc.is {
			t.Errorf("%s: errors.Is(%v, ErrNoShellIntegration) = %v, want %v", tc.line, err, got, tc.is)
		}
		if got := errors.Is(fmt.Errorf("session x: %w", err), ErrNoShellIntegration); got != tc.is {
			t.Errorf("%s: wrapped: errors.Is = %v, want %v", tc.line, got, tc.is)
		}
		if errors.Is(err, ErrNoAnswer) {
			t.Errorf("%s: an answer matched ErrNoAnswer", tc.line)
		}
		var de DaemonError
		if !errors.As(err, &de) || de.Error() != "no marks (OSC 133)" {
			t.Errorf("%s: error %#v, want a DaemonError with the answer's text", tc.line, err)
		}
	}
}

// The daemon's side: a CodedError is its sentinel and its text, no more.
func TestCodedError(t *testing.T) {
	var err error = CodedError{Code: ErrNoShellIntegration, Text: "no marks"}
	if !errors.Is(fmt.Errorf("run: %w", err), ErrNoShellIntegration) || err.Error() != "no marks" {
		t.Errorf("CodedError: Is %v, text %q", errors.Is(err, ErrNoShellIntegration), err)
	}
	if errors.Is(err, ErrNoAnswer) || errors.Is(RequestError("no marks"), ErrNoShellIntegration) {
		t.Error("a CodedError matched another sentinel, or a plain RequestError matched a code")
	}
}
