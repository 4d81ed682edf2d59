//go:build unix

package sidecar_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// A host that pipes the sidecar's stderr and never reads it: the lines the
// sidecar logs (here one per malformed OPEN, each quoting a 4 KB id) fill
// the pipe many times over, and terminals are still opened and served.
func TestUnreadStderrStallsNothing(t *testing.T) {
	t.Parallel()
	errR, errW, err := os.Pipe()
	require.NoError(t, err)
	defer errR.Close() // never read
	cmd := exec.Command(sidecarBin, sidecarArgs...)
	cmd.Stderr = errW
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	errW.Close()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	frames := make(chan proto.Frame, 1024)
	go func() {
		r := proto.NewReader(stdout)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				close(frames)
				return
			}
			frames <- f
		}
	}()
	// 64 malformed OPENs, each logged with its id: about 256 KB of stderr.
	var batch []byte
	for i := range 64 {
		id := fmt.Sprintf("bad%02d-%s", i, strings.Repeat("x", 4000))
		batch = proto.AppendFrame(batch, proto.TypeOpen, fmt.Appendf(nil, `{"terminalId":%q,"cols":"eighty","rows":24,"cmd":"cat"}`, id))
	}
	batch = proto.AppendFrame(batch, proto.TypeOpen, []byte(`{"terminalId":"ok","cols":80,"rows":24,"cmd":"cat"}`))
	batch = proto.AppendDataFrame(batch, proto.TypeInput, "ok", []byte("still-served\n"))
	// Written aside: a sidecar stuck on stderr stops reading its stdin.
	go stdin.Write(batch)
	var out []byte
	timeout := time.After(30 * time.Second)
	for !bytes.Contains(out, []byte("still-served")) {
		select {
		case f, ok := <-frames:
			require.True(t, ok, "the sidecar's stdout ended")
			if f.Type == proto.TypeOutput {
				if id, data, err := proto.ParseData(f.Body); err == nil && id == "ok" {
					out = append(out, data...)
				}
			}
		case <-timeout:
			t.Fatalf("no echo from a terminal opened after 64 logged errors, with stderr unread (got %q)", out)
		}
	}
}
