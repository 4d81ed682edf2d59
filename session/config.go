//go:build unix

package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// Config describes one session.
type Config struct {
	// SocketPath is where to listen; "" creates socket inside a fresh
	// private /tmp/interminai-XXXX directory, removed again on STOP.
	SocketPath string
	Command    []string // program and arguments; required
	Cols, Rows int      // 0 means 80x24
	// Scrollback is the scrollback capacity in lines; 0 keeps none.
	Scrollback int
	// DebugBuffer is the capacity of the unhandled-sequence list; 0 means
	// 10, and a negative value keeps none (DEBUG then only counts them as
	// dropped): what `start --debug-buffer 0` asks for.
	DebugBuffer int
	// Plain makes every answer plain text ("--emulator custom"), and the
	// program gets TERM=ansi unless Env sets TERM.
	Plain bool
	// PTYDump, when set, receives every byte read from the PTY (appended).
	PTYDump string
	Dir     string            // child's working directory; "" inherits ours
	Env     map[string]string // merged over our environment for the child
	// IdleExit, when positive, ends the daemon (as STOP would) once the
	// program has exited and no request has come for this long.
	IdleExit time.Duration
	// ShellIntegration makes a bash or zsh Command send the OSC 133 marks
	// that COMMANDS and RUN read, through a generated startup file that
	// runs the user's own first (package shellinteg). Other programs are
	// refused.
	ShellIntegration bool
}

// Defaults of interminai's start command.
const (
	DefaultCols        = 80
	DefaultRows        = 24
	DefaultScrollback  = 10000
	DefaultDebugBuffer = 10
)

func (c *Config) validate() error {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return errors.New("the command argument is required")
	}
	if c.Cols == 0 && c.Rows == 0 {
		c.Cols, c.Rows = DefaultCols, DefaultRows
	}
	if c.Cols < 1 || c.Rows < 1 || c.Cols > wire.MaxDim || c.Rows > wire.MaxDim {
		return fmt.Errorf("Invalid size: %dx%d", c.Cols, c.Rows)
	}
	if c.Scrollback < 0 {
		return fmt.Errorf("invalid scrollback %d: must be 0 or more", c.Scrollback)
	}
	if c.IdleExit < 0 {
		return fmt.Errorf("invalid idle exit %v: must not be negative", c.IdleExit)
	}
	return nil
}

// plainTerm is the TERM of a Plain session's program, as interminai's
// custom emulator sets it: a terminal type without colours, so programs
// that look at TERM do not draw what the plain answers would drop.
const plainTerm = "ansi"

// childEnv is c.Env, with TERM=plainTerm added for a Plain session that
// does not choose its own TERM.
func childEnv(c Config) map[string]string {
	if _, ok := c.Env["TERM"]; !c.Plain || ok {
		return c.Env
	}
	env := make(map[string]string, len(c.Env)+1)
	for k, v := range c.Env {
		env[k] = v
	}
	env["TERM"] = plainTerm
	return env
}
