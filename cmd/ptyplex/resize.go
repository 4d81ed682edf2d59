//go:build unix

package main

import (
	"fmt"

	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("resize", "change the terminal size (the program gets SIGWINCH)", runResize)
}

const resizeAbout = `
Resizes the PTY (the program gets SIGWINCH) and the screen, then prints
"Terminal resized to <cols>x<rows>".`

func runResize(args []string) int {
	c := newCLI("resize", "ptyplex resize --socket PATH --size WxH", resizeAbout, true)
	size := c.fs.String("size", "", "new size as `COLSxROWS`; required")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	if *size == "" {
		return c.usageError("the --size option is required")
	}
	cols, rows, err := wire.ParseSize(*size)
	if err != nil {
		return printErr(err)
	}
	if !call(c.socket, map[string]any{"type": "RESIZE", "cols": cols, "rows": rows}, nil) {
		return exitFail
	}
	// The size asked for, which the daemon applied: daemons answer it in
	// different shapes.
	fmt.Printf("Terminal resized to %dx%d\n", cols, rows)
	return exitOK
}
