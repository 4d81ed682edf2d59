//go:build unix

package main

import (
	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("kill", "send a signal to the program", runKill)
}

const killAbout = `
Sends a signal to the program (default SIGTERM). SIG may be one of the names
SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 (with or without
the SIG prefix, in any case), or any signal's number (9, 15, 19, ...). Prints nothing when the signal was sent, as interminai's
kill; an error says why it was not.`

func runKill(args []string) int {
	c := newCLI("kill", "ptyplex kill --socket PATH [--signal SIG]", killAbout, true)
	sig := c.fs.String("signal", "SIGTERM", "signal `SIG` to send: name or number")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	// Check here too, so a typo fails even when the daemon is gone.
	if _, _, err := signame.ParseSession(*sig); err != nil {
		return printErr(err)
	}
	var out wire.KillData
	if !call(c.socket, map[string]any{"type": "KILL", "signal": *sig}, &out) {
		return exitFail
	}
	return exitOK
}

func printErr(err error) int {
	printError(err)
	return exitFail
}
