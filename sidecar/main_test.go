//go:build unix

package sidecar_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/session/wire"
	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// sidecarBin is the built ptyplex-sidecar every end-to-end test drives.
var sidecarBin string

// persistEnv, set to a server name, runs every host of these tests
// through `ptyplex-sidecar --persist NAME --readopt` instead of a plain
// sidecar: one persistent server (in $PTYPLEX_RUNTIME_DIR) serves the
// whole run and the next, as it would serve a host's own test suite run
// twice (make test-readopt). Tests of what only a plain sidecar does (it
// ends with its host, its own descriptors and flags) are skipped then.
const persistEnv = "PTYPLEX_TEST_PERSIST"

// sidecarArgs are the arguments every host starts the binary with.
var sidecarArgs []string

func TestMain(m *testing.M) {
	finish := testproc.Start()
	var err error
	sidecarBin, err = hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if name := os.Getenv(persistEnv); name != "" {
		sidecarArgs = []string{"--persist", name, "--readopt"}
		spareServer(name)
	}
	code := finish(m.Run())
	hosttest.Cleanup()
	os.Exit(code)
}

// spareServer keeps the terminals of persistent server name, when one
// runs already, from the end-of-run check: their programs carry this
// run's mark (a terminal starts from its host's bridge's environment),
// but they are the server's, left for the next run to re-adopt, and
// whoever started the server ends them (make test-readopt: --stop). A
// server started by this run's first bridge is this run's, and ends
// with everything else of it.
func spareServer(name string) {
	c, err := persist.Dial(name)
	if err != nil {
		return // none yet
	}
	defer c.Close()
	if pid := wire.PeerPID(c); pid > 0 {
		testproc.SpareDescendantsOf(pid)
	}
}
