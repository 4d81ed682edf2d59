//go:build unix

package wire

import (
	"fmt"
	"strings"
)

// Text renders a DEBUG answer the way `ptyplex debug` prints it: the
// unhandled sequences (or "No unhandled escape sequences"), the dropped
// count when there is one, and the termios summary, each line ending in a
// newline.
func (d DebugData) Text() string {
	var b strings.Builder
	if len(d.Unhandled) == 0 {
		b.WriteString("No unhandled escape sequences\n")
	} else {
		b.WriteString("Unhandled escape sequences:\n")
		for _, u := range d.Unhandled {
			fmt.Fprintf(&b, "  %s (%s)\n", u.Sequence, u.RawHex)
		}
	}
	if d.Dropped > 0 {
		fmt.Fprintf(&b, "Dropped: %d (buffer overflow)\n", d.Dropped)
	}
	t := d.Termios
	b.WriteString("Termios:\n")
	fmt.Fprintf(&b, "  Mode: %s\n", t.Mode)
	if len(t.Flags) > 0 { // interminai leaves out an empty list
		fmt.Fprintf(&b, "  Flags: %s\n", strings.Join(t.Flags, " "))
	}
	fmt.Fprintf(&b, "  Hex: iflag=%s oflag=%s lflag=%s cflag=%s\n", t.Hex.Iflag, t.Hex.Oflag, t.Hex.Lflag, t.Hex.Cflag)
	fmt.Fprintf(&b, "  c_cc: VINTR=%s VEOF=%s VERASE=%s VKILL=%s VSUSP=%s VQUIT=%s\n",
		t.CC.VINTR, t.CC.VEOF, t.CC.VERASE, t.CC.VKILL, t.CC.VSUSP, t.CC.VQUIT)
	return b.String()
}
