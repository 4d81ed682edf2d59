//go:build unix

package main

import (
	"fmt"

	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("debug", "show unhandled escape sequences and terminal modes", runDebug)
}

const debugAbout = `
Prints the escape sequences the emulator did not handle (oldest first) and
the PTY's termios settings:
  Unhandled escape sequences:
    \e[?1337h (1b5b3f31333337...)
  Dropped: N (buffer overflow)
  Termios:
    Mode: cooked|raw
    Flags: ECHO ISIG ICRNL IXON OPOST ONLCR
    Hex: iflag=0x.... oflag=0x.... lflag=0x.... cflag=0x....
    c_cc: VINTR=^C VEOF=^D VERASE=^? VKILL=^U VSUSP=^Z VQUIT=^\
--clear empties the list of unhandled sequences after printing it.`

func runDebug(args []string) int {
	c := newCLI("debug", "ptyplex debug --socket PATH [--clear]", debugAbout, true)
	clear := c.fs.Bool("clear", false, "clear the unhandled-sequence list after reading it")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	var d wire.DebugData
	req := map[string]any{"type": "DEBUG", "clear": *clear}
	if !call(c.socket, req, &d) {
		return exitFail
	}
	fmt.Print(d.Text())
	return exitOK
}
