//go:build linux

package client

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A CLOSE the sidecar takes only after Terminal.Close gave up waiting for
// it (its frames held back behind another terminal's paste): Close hung
// the child up itself, and once the sidecar took the CLOSE it is the
// sidecar's to end the child, with its own grace period. The hang-up
// went on to SIGKILL at once instead, as the CLOSE was taken: a program
// that cleans up on SIGHUP was killed in the middle of it.
func TestCloseTakenLateLeavesTheChildItsGrace(t *testing.T) {
	logs := newLogWatch(t)
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: logs, Hello: true})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	// The victim takes a moment to clean up at its second SIGHUP (the
	// sidecar's, for the CLOSE), then exits 7.
	victim := rawReady(t, c, OpenOptions{ID: "victim"},
		`n=0; trap 'n=$((n+1)); echo HUP$n; if [ $n -ge 2 ]; then sleep 0.3; exit 7; fi' HUP; while :; do sleep 0.05; done`)
	out := collect(victim)
	stuck := rawReady(t, c, OpenOptions{ID: "stuck", Raw: true}, "exec cat >/dev/null")
	require.NoError(t, syscall.Kill(stuck.Pid(), syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(stuck.Pid(), syscall.SIGCONT) })
	go stuck.Write(make([]byte, 18<<20))
	logs.waitFor(t, holdingBack("stuck"))
	waitWriteBlocked(t, c)

	// The CLOSE is written, its PING's PONG does not come: Close hangs
	// the victim up itself.
	require.NoError(t, victim.Close())
	out.waitText(t, "HUP1")
	// The sidecar reads on, takes the CLOSE and hangs the victim up.
	require.NoError(t, syscall.Kill(stuck.Pid(), syscall.SIGCONT))
	select {
	case <-victim.Done():
	case <-time.After(waitBound):
		t.Fatal("the victim did not end")
	}
	st, err := victim.Wait()
	require.NoError(t, err)
	require.Equal(t, 7, st.Code, "the victim was killed during its clean-up: %+v", st)
}
