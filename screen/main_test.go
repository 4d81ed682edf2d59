package screen

import (
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// The differential and golden tests start tmux servers, which detach, and
// panes that sleep for minutes; their deferred kill-server does not run
// when the binary is killed or a test timeout panics. testproc ends them
// with the binary however it ends.
func TestMain(m *testing.M) {
	finish := testproc.Start()
	os.Exit(finish(m.Run()))
}
