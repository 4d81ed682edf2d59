// Command ptyplex runs interactive programs in a PTY behind a per-session
// daemon. Its daemon is built on Unix PTYs, process groups and Unix
// socket peer credentials; on Windows only ptyplex-sidecar.exe (and the
// Go client and npm package on top of it) runs, see docs/platforms.md.
package main

import (
	"fmt"
	"os"

	"github.com/ptyplex/ptyplex/internal/version"
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "version" || os.Args[1] == "--version") {
		fmt.Println(version.String("ptyplex", "none"))
		return
	}
	fmt.Fprintln(os.Stderr, "ptyplex: the session CLI, its daemon, --persist and the MCP server are not supported on Windows yet: "+
		"they need Unix PTYs, process groups and Unix socket credentials. "+
		"ptyplex-sidecar.exe, the Go client and the npm package run on Windows (ConPTY); see docs/platforms.md.")
	os.Exit(1)
}
