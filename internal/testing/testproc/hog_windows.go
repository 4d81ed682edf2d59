package testproc

import "os/exec"

// TieToParent does nothing on Windows; the test's cleanup ends cmd.
func TieToParent(cmd *exec.Cmd) {}
