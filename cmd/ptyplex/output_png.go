//go:build unix

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ptyplex/ptyplex/internal/safefile"
	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/session/wire"
)

const outputPNGAbout = `

--png FILE (a ptyplex addition) writes the visible screen as a PNG image
instead of printing text: colours, bold, underline, inverse, wide
characters and the cursor, in Go Mono with 9x19-pixel cells. Characters
the font lacks (CJK, emoji) are drawn as boxes of their width. --png -
writes the image to stdout. FILE is created with mode 0600, or replaced
if it is a regular file of ours; a symbolic link, a file of another user
or one with several hard links is refused and left as it is. The image
is written to a temporary file beside FILE and renamed over it once
complete: a failed write (a full disk) leaves FILE as it was.`

// addPNGFlag registers output's --png flag.
func addPNGFlag(fs *flag.FlagSet) *string {
	return fs.String("png", "", "write the screen as a PNG image to `FILE` (- for stdout)")
}

// runOutputPNG is `output --png FILE`: the daemon renders the screen
// (see wire.ScreenshotData for why it, and not the client, draws) and
// the image is written to path. The file is opened only once the image
// is in hand, so a failed render leaves an existing file untouched.
func runOutputPNG(c *cli, path string) int {
	var other []string
	c.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "png", "socket", "color", "no-color", "format":
		default:
			other = append(other, "--"+f.Name)
		}
	})
	if len(other) > 0 {
		return c.usageError("--png writes the visible screen as an image: %s cannot be combined with it", strings.Join(other, ", "))
	}
	if path == "-" && ptyhost.IsTerminal(os.Stdout) {
		return c.usageError("--png - would write binary PNG data to the terminal; redirect stdout or name a file")
	}
	var ans wire.ScreenshotData
	if !call(c.socket, map[string]any{"type": "OUTPUT", "format": "png"}, &ans) {
		return exitFail
	}
	if len(ans.PNG) == 0 {
		fmt.Fprintln(os.Stderr, "Error: the daemon answered without an image (does it predate \"format\":\"png\"?)")
		return exitFail
	}
	if err := writePNG(path, ans.PNG); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return exitFail
	}
	return exitOK
}

func writePNG(path string, data []byte) error {
	if path == "-" {
		if _, err := os.Stdout.Write(data); err != nil {
			return fmt.Errorf("write the PNG to stdout: %w", err)
		}
		return nil
	}
	// Whole or not at all: a full disk must not leave a fragment, or
	// destroy the image that was there.
	return safefile.WriteWhole(path, data) // its errors name the path
}
