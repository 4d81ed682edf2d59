//go:build unix

package ptyhost

import (
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// The tests start programs that ignore SIGHUP and background jobs that
// sleep for many minutes; the PTY's hangup does not reach all of them
// when the binary dies. testproc ends them with the binary however it
// ends. (Windows has its own TestMain, process_windows_test.go.)
func TestMain(m *testing.M) {
	finish := testproc.Start()
	os.Exit(finish(m.Run()))
}
