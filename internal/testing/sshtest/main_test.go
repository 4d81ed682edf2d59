package sshtest

import (
	"os"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// sshd runs in the foreground as our child, which nothing kills when the
// binary dies; testproc ends it with the binary however it ends.
func TestMain(m *testing.M) {
	finish := testproc.Start()
	os.Exit(finish(m.Run()))
}
