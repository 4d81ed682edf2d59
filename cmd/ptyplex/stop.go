//go:build unix

package main

func init() {
	register("stop", "end the program and the session daemon", runStop)
}

const stopAbout = `
Ends the program (SIGHUP and SIGTERM to its process group, SIGKILL after 2
seconds, and any leftovers of its session) and the daemon. An
auto-generated socket and its directory are removed; a socket path given to
start is left in place.`

func runStop(args []string) int {
	c := newCLI("stop", "ptyplex stop --socket PATH", stopAbout, true)
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	if !call(c.socket, map[string]any{"type": "STOP"}, nil) {
		return exitFail
	}
	return exitOK
}
