package soak

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/internal/testing/testsize"
)

var full = flag.Bool("soak", false, "run the soak tests at full size (make soak; PTYPLEX_SOAK=1 too)")

// size picks the full-size figure under -soak or PTYPLEX_SOAK=1 and the
// short one otherwise.
func size[T any](short, long T) T {
	if *full || testsize.Full() {
		return long
	}
	return short
}

var sidecarBin string

func TestMain(m *testing.M) {
	finish := testproc.Start()
	flag.Parse()
	var err error
	if sidecarBin, err = hosttest.Binary("./cmd/ptyplex-sidecar"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := finish(m.Run())
	hosttest.Cleanup()
	os.Exit(code)
}
