//go:build linux

package client

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A paste larger than the sidecar's 16 MiB input queue into a credited
// terminal whose child echoes it (a raw cat) while another goroutine reads
// the echo: the child stops reading its input whenever its output waits
// for credit, the sidecar then stops reading frames, and the CREDIT the
// reader grants is on the wire behind the paste. Unless the paste is paced
// so that the sidecar's look-ahead always reaches that CREDIT, both ends
// wait for each other for ever.
func TestLargePasteIntoEchoingCreditedTerminal(t *testing.T) {
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: testLog{t}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	term, err := c.Open(t.Context(), OpenOptions{
		Cmd:    "/bin/sh",
		Args:   []string{"-c", "stty raw -echo; echo READY; exec cat"},
		Window: 16 << 10,
	})
	require.NoError(t, err)
	ready := make([]byte, len("READY\n"))
	_, err = io.ReadFull(term, ready)
	require.NoError(t, err)
	require.Equal(t, "READY\n", string(ready))

	// Printable bytes only (a tty in raw mode still knows a few
	// controls), in a pattern that no frame or piece boundary repeats,
	// so that a lost, doubled or reordered piece shows.
	const size = 20 << 20
	paste := make([]byte, size)
	for i := range paste {
		paste[i] = 'a' + byte((i+i/4099)%26)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := term.Write(paste)
		wrote <- err
	}()
	echoed := make(chan error, 1)
	got := make([]byte, size)
	go func() {
		_, err := io.ReadFull(term, got)
		echoed <- err
	}()
	deadline := time.NewTimer(90 * time.Second)
	defer deadline.Stop()
	for wrote != nil || echoed != nil {
		select {
		case err := <-wrote:
			require.NoError(t, err, "Write")
			wrote = nil
		case err := <-echoed:
			require.NoError(t, err, "reading the echo")
			echoed = nil
		case <-deadline.C:
			term.Close()
			t.Fatalf("the paste and its echo did not finish in 90s (write done: %v, echo done: %v): host and sidecar wait for each other",
				wrote == nil, echoed == nil)
		}
	}
	if !bytes.Equal(paste, got) {
		i := 0
		for i < size && paste[i] == got[i] {
			i++
		}
		t.Fatalf("the echo differs from the paste at byte %d of %d", i, size)
	}
}
