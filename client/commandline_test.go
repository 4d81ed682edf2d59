//go:build unix

package client

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// CommandLine reaches the sidecar in OPEN: one on Unix refuses it, saying
// it is for Windows; with Args it is refused before anything is sent; and
// a sidecar whose HELLO does not list it (as an older Windows one, which
// would start the program without it) is not sent it at all.
func TestOpenCommandLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()

	c := startClient(t)
	_, err := c.Open(ctx, OpenOptions{Cmd: "cmd.exe", CommandLine: `/c echo "a b"`})
	var oe *OpenError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "commandLine is only for Windows") {
		t.Fatalf("Open with CommandLine on a Unix sidecar: %v, want the sidecar's refusal as an *OpenError", err)
	}
	_, err = c.Open(ctx, OpenOptions{Cmd: "cmd.exe", Args: []string{"/c"}, CommandLine: "echo x"})
	if err == nil || !strings.Contains(err.Error(), "cannot both be given") {
		t.Fatalf("Open with CommandLine and Args: %v", err)
	}

	h, err := Start(Options{SidecarPath: sidecarBin, Stderr: testLog{t}, Hello: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = h.Open(ctx, OpenOptions{Cmd: "cmd.exe", CommandLine: "/c exit 3"})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Open with CommandLine, the sidecar's HELLO without the feature: %v, want errors.ErrUnsupported", err)
	}
	// The terminals go on being served.
	term := open(t, h, OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "exit 4"}})
	if st, err := term.Wait(); err != nil || st.Code != 4 {
		t.Fatalf("a terminal after the refusals: %+v, %v", st, err)
	}
}
