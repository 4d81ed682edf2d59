//go:build unix

package persist_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// sidecarBin is the built ptyplex-sidecar every end-to-end test drives.
var sidecarBin string

func TestMain(m *testing.M) {
	finish := testproc.Start()
	var err error
	sidecarBin, err = hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := finish(m.Run())
	hosttest.Cleanup()
	os.Exit(code)
}
