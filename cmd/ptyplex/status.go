//go:build unix

package main

import (
	"fmt"

	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("status", "tell whether the program runs, and its exit code", runStatus)
	register("running", "interminai's older name for status --quiet", runRunning)
}

// runRunning is interminai's older `running`: exit 0 while the program
// runs; after it exited, print the exit code and exit 1.
func runRunning(args []string) int {
	c := newCLI("running", "ptyplex running --socket PATH", "\nThe older form of 'ptyplex status --quiet'.", true)
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	var st wire.StatusData
	if !call(c.socket, map[string]any{"type": "STATUS"}, &st) {
		return exitFail
	}
	if st.Running {
		return exitOK
	}
	fmt.Println(exitCode(st.ExitCode))
	return exitFail
}

const statusAbout = `
Prints:
  Running: true|false
  Activity: true|false     (output since the last status/wait; reading clears it)
  Size: <cols>x<rows>
  Scrollback: <available>/<capacity>
  Exit code: N             (once the program has exited)
--input adds (a ptyplex addition)
  Waiting for input: true|false|unknown
whether the program is blocked reading the terminal with all its output on
the screen at this moment (unknown where the platform cannot tell: see
'ptyplex wait --help', --input). --quiet prints nothing and exits 0 while the program runs; once it has
exited, it prints the exit code and exits 1. --quiet leaves the activity
flag alone. --activity, interminai's older explicit form of the default,
is accepted.
Once the session's --pty-dump file stopped at a failed write (a full disk,
a file size limit), a last line says so (a ptyplex addition):
  PTY dump: stopped after N bytes: <error>
N bytes of this session's output are in the file, with nothing after them.`

func runStatus(args []string) int {
	c := newCLI("status", "ptyplex status --socket PATH [--activity | --quiet] [--input]", statusAbout, true)
	quiet := c.fs.Bool("quiet", false, "print only the exit code, and exit 1, once the program has exited")
	activity := c.fs.Bool("activity", false, "report and clear the activity flag (the default; for interminai's scripts)")
	input := c.fs.Bool("input", false, "also tell whether the program waits for input")
	if done, code := c.parse(args); done {
		return code
	}
	if *activity && *quiet {
		return c.usageError("--activity and --quiet cannot be combined")
	}
	if !c.needSocket() {
		return exitUsage
	}
	var st struct {
		wire.StatusData
		// A daemon that follows the seed alone answers no size; its line
		// is then left out, as interminai's client does.
		Size *wire.Size `json:"size"`
	}
	req := map[string]any{"type": "STATUS", "activity": !*quiet}
	if *input {
		req["input"] = true
	}
	if !call(c.socket, req, &st) {
		return exitFail
	}
	if *quiet {
		if st.Running {
			return exitOK
		}
		fmt.Println(exitCode(st.ExitCode))
		return exitFail
	}
	fmt.Printf("Running: %t\n", st.Running)
	fmt.Printf("Activity: %t\n", st.Activity != nil && *st.Activity)
	if st.Size != nil {
		fmt.Printf("Size: %dx%d\n", st.Size.Cols, st.Size.Rows)
	}
	fmt.Printf("Scrollback: %d/%d\n", st.ScrollbackAvailable, st.ScrollbackCapacity)
	if !st.Running {
		fmt.Printf("Exit code: %d\n", exitCode(st.ExitCode))
	}
	if *input {
		w := "unknown"
		if st.WaitingForInput != nil {
			w = fmt.Sprint(*st.WaitingForInput)
		}
		fmt.Printf("Waiting for input: %s\n", w)
	}
	if ds := st.PTYDumpStopped; ds != nil {
		fmt.Printf("PTY dump: stopped after %d bytes: %s\n", ds.Bytes, ds.Error)
	}
	return exitOK
}

func exitCode(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
