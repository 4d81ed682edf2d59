package client

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
)

// relayEnv, when set, makes the test binary a transport that runs its
// arguments (a sidecar) and relays the sidecar's frames to its own
// stdout, the host's stdin going to the sidecar as it is. If the file
// the variable names can be removed when an ATTACHED passes (one relay
// claims it), that ATTACHED and every frame after it are dropped: a
// connection on which the server took an ATTACH and whose answer never
// reached the host.
const relayEnv = "PTYPLEX_TEST_RELAY"

func runRelay(swallow string, argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "relay: no sidecar to run")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	// Killed with the relay, as the host's transport would be.
	testproc.TieToParent(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	r := proto.NewReader(out)
	dropping := false
	for {
		f, err := r.ReadFrame()
		if err != nil {
			break
		}
		if !dropping && f.Type == proto.TypeAttached && os.Remove(swallow) == nil {
			dropping = true
		}
		if dropping {
			continue
		}
		if err := proto.WriteFrame(os.Stdout, f.Type, f.Body); err != nil {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return 0
}
