//go:build unix

package session

import (
	"fmt"

	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

// reportedFlags are the termios flags DEBUG lists when set: interminai's
// set, in its order (the seed's example leaves out IEXTEN, which its
// lflag has and interminai reports). ICANON is not among them; it is
// reported as the mode.
var reportedFlags = []struct {
	name string
	word func(*unix.Termios) uint64
	bit  uint64
}{
	{"ECHO", lflag, unix.ECHO},
	{"ISIG", lflag, unix.ISIG},
	{"IEXTEN", lflag, unix.IEXTEN},
	{"ICRNL", iflag, unix.ICRNL},
	{"INLCR", iflag, unix.INLCR},
	{"IGNCR", iflag, unix.IGNCR},
	{"IXON", iflag, unix.IXON},
	{"IXOFF", iflag, unix.IXOFF},
	{"OPOST", oflag, unix.OPOST},
	{"ONLCR", oflag, unix.ONLCR},
}

// The flag words are 32 bits on Linux and FreeBSD, 64 on macOS.
func iflag(t *unix.Termios) uint64 { return uint64(t.Iflag) }
func oflag(t *unix.Termios) uint64 { return uint64(t.Oflag) }
func lflag(t *unix.Termios) uint64 { return uint64(t.Lflag) }

// describeTermios renders terminal attributes the way DEBUG reports them.
func describeTermios(t *unix.Termios) wire.TermiosInfo {
	info := wire.TermiosInfo{Mode: "raw", Flags: []string{}}
	if t.Lflag&unix.ICANON != 0 {
		info.Mode = "cooked"
	}
	for _, f := range reportedFlags {
		if f.word(t)&f.bit != 0 {
			info.Flags = append(info.Flags, f.name)
		}
	}
	info.Hex = wire.TermiosHex{
		Iflag: fmt.Sprintf("0x%04x", t.Iflag),
		Oflag: fmt.Sprintf("0x%04x", t.Oflag),
		Lflag: fmt.Sprintf("0x%04x", t.Lflag),
		Cflag: fmt.Sprintf("0x%04x", t.Cflag),
	}
	info.CC = wire.ControlCCs{
		VINTR:  caret(t.Cc[unix.VINTR]),
		VEOF:   caret(t.Cc[unix.VEOF]),
		VERASE: caret(t.Cc[unix.VERASE]),
		VKILL:  caret(t.Cc[unix.VKILL]),
		VSUSP:  caret(t.Cc[unix.VSUSP]),
		VQUIT:  caret(t.Cc[unix.VQUIT]),
	}
	return info
}

// caret writes a control character in ^X notation: 0x03 is ^C, 0x1c is ^\,
// DEL is ^?. 0 is _POSIX_VDISABLE on Linux (the function is off), shown as
// interminai shows it, "<disabled>"; anything else as hex, as interminai
// does too.
func caret(c uint8) string {
	switch {
	case c == 0:
		return "<disabled>"
	case c < 0x20:
		return "^" + string(rune(c+'@'))
	case c == 0x7f:
		return "^?"
	default:
		return fmt.Sprintf("0x%02x", c)
	}
}
