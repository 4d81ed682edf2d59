//go:build unix

package wire

import (
	"fmt"
	"strings"
)

// Text renders a DEBUG answer the way `ptyplex debug` prints it: the
// unhandled sequences (or "No unhandled escape sequences"), the dropped
// count when there is one, and the termios summary, each line ending in a
// newline. As interminai's client, it leaves out what the answer lacks and
// prints "?" for a missing value.
func (d DebugData) Text() string {
	var b strings.Builder
	switch {
	case d.Unhandled == nil:
	case len(d.Unhandled) == 0:
		b.WriteString("No unhandled escape sequences\n")
	default:
		b.WriteString("Unhandled escape sequences:\n")
		for _, u := range d.Unhandled {
			fmt.Fprintf(&b, "  %s (%s)\n", u.Sequence, u.RawHex)
		}
	}
	if d.Dropped > 0 {
		fmt.Fprintf(&b, "Dropped: %d (buffer overflow)\n", d.Dropped)
	}
	t := d.Termios
	switch {
	case t == nil:
		return b.String()
	case t.Error != "":
		fmt.Fprintf(&b, "Termios: %s\n", t.Error)
		return b.String()
	}
	b.WriteString("Termios:\n")
	fmt.Fprintf(&b, "  Mode: %s\n", or(t.Mode))
	if len(t.Flags) > 0 { // interminai leaves out an empty list
		fmt.Fprintf(&b, "  Flags: %s\n", strings.Join(t.Flags, " "))
	}
	fmt.Fprintf(&b, "  Hex: iflag=%s oflag=%s lflag=%s cflag=%s\n", or(t.Hex.Iflag), or(t.Hex.Oflag), or(t.Hex.Lflag), or(t.Hex.Cflag))
	fmt.Fprintf(&b, "  c_cc: VINTR=%s VEOF=%s VERASE=%s VKILL=%s VSUSP=%s VQUIT=%s\n",
		or(t.CC.VINTR), or(t.CC.VEOF), or(t.CC.VERASE), or(t.CC.VKILL), or(t.CC.VSUSP), or(t.CC.VQUIT))
	return b.String()
}

// or is s, or "?" for a value the answer did not carry.
func or(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
