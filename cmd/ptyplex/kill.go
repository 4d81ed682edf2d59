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
Sends a signal to the program (default SIGTERM). SIG may be a name with or
without the SIG prefix (SIGTERM, KILL, INT, HUP, QUIT, USR1, USR2, ...) or a
number (9, 15, ...). Prints nothing when the signal was sent, as interminai's
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
	if _, _, err := signame.Parse(*sig); err != nil {
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
