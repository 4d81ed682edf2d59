//go:build unix

package client

import (
	"io/fs"
	"os/exec"
)

const exeSuffix = ""

func executable(fi fs.FileInfo) bool { return fi.Mode()&0o111 != 0 }

func noWindow(*exec.Cmd) {}
