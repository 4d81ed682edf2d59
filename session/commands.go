//go:build unix

package session

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ptyplex/ptyplex/ptyhost"
	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/session/wire"
)

// maxCommands bounds the commands a session remembers: the oldest go
// first. A command's output is not copied, only its line range, so the
// bound is about the list's answer, not memory.
const maxCommands = 100

// command is one shell command built from the shell's OSC 133 marks: B
// (the command line starts), C (its output starts), D (it ended, with
// its status). Lines are absolute (see screen.Mark).
type command struct {
	id              int
	text            string
	outLine, outCol int // where C left the cursor
	endLine, endCol int // where D left it
	started, ended  time.Time
	running         bool
	status          int
	hasStatus       bool
	// shellExited says the program exited while the command ran, without
	// a D: the program's exit was the command's end, and its exit code
	// the command's status.
	shellExited bool
}

// commandLog turns the marks into commands as the output is fed; it lives
// in state, under st.mu.
type commandLog struct {
	seen    int  // marks consumed (screen.MarksTotal)
	any     bool // a mark has been seen: the shell has integration
	last    byte // the kind of the last main-screen mark
	haveB   bool // B came since the last A: a command line is being typed
	bLine   int
	bCol    int
	nextID  int
	cmds    []*command
	running *command
	// typed is the line RUN typed at the prompt, for the command it
	// starts: the screen shows it as the line editor drew it, which can
	// differ (a redraw after characters of uncertain width).
	typed string
}

// update consumes the marks that came since the last call. now stamps
// them: a feed is one read from the PTY, so marks in one read share a time.
func (l *commandLog) update(scr *screen.Screen, now time.Time) {
	total := scr.MarksTotal()
	if total == l.seen {
		return
	}
	marks := scr.Marks()
	fresh := min(total-l.seen, len(marks))
	l.seen = total
	for _, m := range marks[len(marks)-fresh:] {
		if m.Alt {
			continue // a full-screen program's marks say nothing of the shell's commands
		}
		l.any = true
		switch m.Kind {
		case 'A':
			if l.running != nil {
				// A new prompt without D: the shell did not report an end
				// (no status); the command is over all the same.
				l.finish(m, now, false, 0)
			}
			l.haveB = false
		case 'B':
			l.haveB, l.bLine, l.bCol = true, m.Line, m.Col
		case 'C':
			if l.running != nil {
				l.finish(m, now, false, 0)
			}
			c := l.add(now)
			c.running = true
			c.outLine, c.outCol = m.Line, m.Col
			switch {
			case l.typed != "":
				c.text, l.typed = l.typed, ""
			case l.haveB:
				c.text = commandText(scr, l.bLine, l.bCol, m.Line, m.Col)
			}
			l.haveB = false
			l.running = c
		case 'D':
			switch {
			case l.running != nil:
				l.finish(m, now, m.HasStatus, m.Status)
			case l.haveB && m.Line > l.bLine:
				// A line the shell read but ran nothing for (a syntax
				// error, bash's empty line): no C came. It is a command
				// when something was typed; its output is what follows
				// the command line.
				text := commandText(scr, l.bLine, l.bCol, l.bLine+1, 0)
				if l.typed != "" {
					text, l.typed = l.typed, ""
				}
				if strings.TrimSpace(text) == "" {
					break
				}
				c := l.add(now)
				c.text = text
				c.outLine, c.outCol = l.bLine+1, 0
				c.endLine, c.endCol = m.Line, m.Col
				c.ended = now
				c.status, c.hasStatus = m.Status, m.HasStatus
			}
			l.haveB = false
		}
		l.last = m.Kind
	}
}

func (l *commandLog) add(now time.Time) *command {
	l.nextID++
	c := &command{id: l.nextID, started: now}
	if len(l.cmds) == maxCommands {
		copy(l.cmds, l.cmds[1:])
		l.cmds = l.cmds[:maxCommands-1]
	}
	l.cmds = append(l.cmds, c)
	return c
}

func (l *commandLog) finish(m screen.Mark, now time.Time, has bool, status int) {
	c := l.running
	l.running = nil
	c.running = false
	c.ended = now
	c.endLine, c.endCol = m.Line, m.Col
	c.status, c.hasStatus = status, has
}

// exited ends the running command, if any, when the program has exited
// (with code) without the shell marking its end: exit N, exec, or a
// signal that ended the shell. Its output runs to where the cursor was.
func (l *commandLog) exited(scr *screen.Screen, now time.Time, code int) {
	c := l.running
	if c == nil {
		return
	}
	line, col := cursorLine(scr)
	l.finish(screen.Mark{Line: line, Col: col}, now, true, code)
	c.shellExited = true
}

// cursorLine is the cursor's absolute line and column on the main screen;
// while a full-screen program is up, the end of the main screen's lines.
func cursorLine(scr *screen.Screen) (line, col int) {
	if scr.AltScreen() {
		return scr.ScrolledOff() + screenRows(scr), 0
	}
	row, col := scr.Cursor()
	return row + scr.ScrolledOff(), col
}

// atPrompt reports whether the shell shows its prompt with no command
// running: the last mark was a prompt's.
func (l *commandLog) atPrompt() bool {
	return l.any && l.running == nil && (l.last == 'A' || l.last == 'B')
}

// after returns the first command with an id above id, or nil.
func (l *commandLog) after(id int) *command {
	for _, c := range l.cmds {
		if c.id > id {
			return c
		}
	}
	return nil
}

// commandText is the command line the shell showed between B and C.
func commandText(scr *screen.Screen, a, ac, b, bc int) string {
	t, _ := spanText(scr, a, ac, b, bc)
	return strings.TrimRight(t, "\n")
}

// absLine maps an absolute line to OUTPUT's numbering now; ok is false
// once the scrollback no longer holds it.
func absLine(scr *screen.Screen, abs int) (n int, ok bool) {
	k := abs - scr.ScrolledOff()
	_, rows := scr.Size()
	switch {
	case k >= 0 && k < rows:
		return k + 1, true
	case k < 0 && -k <= scr.ScrollbackLen():
		return k, true
	}
	return 0, false
}

// spanText is the plain text from (line a, column ac) up to, not
// including, (line b, column bc): every complete line ends in a newline
// unless the text wrapped there, as the program printed it. lost counts
// the lines the scrollback no longer holds.
func spanText(scr *screen.Screen, a, ac, b, bc int) (text string, lost int) {
	// One growing byte slice, trimmed in place: the output may be a
	// million lines, and it is built under the state's lock.
	var buf []byte
	var cells []screen.Cell
	for line := a; line <= b; line++ {
		if line == b && bc == 0 {
			break
		}
		n, ok := absLine(scr, line)
		if !ok {
			lost++
			continue
		}
		cells = scr.Cells(n, cells)
		from, to := 0, len(cells)
		if line == a {
			from = min(ac, to)
		}
		partial := line == b
		if partial {
			to = min(bc, to)
		}
		wrapped := !partial && scr.LineWrapped(n)
		if wrapped && to == len(cells) && to > from && cells[to-1].Text == "" && cells[to-1].Width == 1 && wideFirst(scr, line+1) {
			// A wide character that did not fit the last column wrapped
			// to the next line and left that column blank: the blank is
			// the terminal's, not the program's (a space it printed there
			// would be " ").
			to--
		}
		start := len(buf)
		for _, c := range cells[from:to] {
			switch {
			case c.Width == 0: // the right half of a wide character
			case c.Text == "":
				buf = append(buf, ' ')
			default:
				buf = append(buf, c.Text...)
			}
		}
		if !wrapped {
			// Trailing blanks are the screen's, not the program's, except
			// where the text wrapped on: trim them back to this line's
			// start. (Trimmed where they lie: rebuilding the text so far
			// for every line made a long output cost its length squared.)
			buf = buf[:start+len(bytes.TrimRight(buf[start:], " "))]
		}
		if !partial && !wrapped {
			buf = append(buf, '\n')
		}
	}
	return string(buf), lost
}

// wideFirst reports whether absolute line abs starts with a wide
// character.
func wideFirst(scr *screen.Screen, abs int) bool {
	n, ok := absLine(scr, abs)
	if !ok {
		return false
	}
	cells := scr.Cells(n, nil)
	return len(cells) > 0 && cells[0].Width == 2
}

// output returns c's output so far: up to D, or up to the cursor while it
// runs.
func (c *command) output(scr *screen.Screen) (string, int) {
	endLine, endCol := c.endLine, c.endCol
	if c.running {
		// (With a full-screen program up, the main screen's lines are
		// where the output was when it switched.)
		endLine, endCol = cursorLine(scr)
	}
	if endLine < c.outLine || (endLine == c.outLine && endCol <= c.outCol) {
		return "", 0
	}
	return spanText(scr, c.outLine, c.outCol, endLine, endCol)
}

func screenRows(scr *screen.Screen) int { _, r := scr.Size(); return r }

// wire describes c as of now.
func (c *command) wire(scr *screen.Screen, now time.Time) wire.Command {
	w := wire.Command{ID: c.id, Command: c.text, Running: c.running, ShellExited: c.shellExited, Started: c.started.UnixMilli()}
	end := now
	if !c.running {
		end = c.ended
		w.Ended = c.ended.UnixMilli()
		if c.hasStatus {
			s := c.status
			w.ExitCode = &s
		}
	}
	w.DurationMS = end.Sub(c.started).Milliseconds()
	// The output ends at D, or at the cursor while it runs: a line
	// ending at column 0 has nothing of it, and an end at or before C
	// means no output yet.
	last, lastCol := c.endLine, c.endCol
	if c.running {
		last, lastCol = cursorLine(scr)
	}
	if last < c.outLine || (last == c.outLine && lastCol <= c.outCol) {
		last = c.outLine - 1
	} else if lastCol == 0 {
		last--
	}
	w.OutputFirst, w.OutputLast = c.outLine, max(last, c.outLine-1)
	w.OutputLines = w.OutputLast - w.OutputFirst + 1
	if w.OutputLines <= 0 {
		w.OutputLines, w.OutputLast = 0, c.outLine
		return w
	}
	for line := w.OutputFirst; line <= w.OutputLast; line++ {
		if n, ok := absLine(scr, line); ok {
			w.From = n
			break
		}
		w.LinesLost++
	}
	if n, ok := absLine(scr, w.OutputLast); ok {
		w.To = n
	}
	return w
}

// commands answers COMMANDS. "last": N limits it to the newest N.
func (d *Daemon) commands(f wire.Fields) (any, error) {
	last, hasLast, err := f.Int("last")
	if err != nil {
		return nil, err
	}
	if hasLast && last < 0 {
		return nil, wire.Invalidf("field 'last' must be 0 or more")
	}
	st := d.st
	st.mu.Lock()
	defer st.mu.Unlock()
	l := &st.cmds
	cmds := l.cmds
	if hasLast && last < len(cmds) {
		cmds = cmds[len(cmds)-last:]
	}
	now := time.Now()
	out := wire.CommandsData{Commands: make([]wire.Command, 0, len(cmds)), Integration: l.any, AtPrompt: l.atPrompt()}
	for _, c := range cmds {
		out.Commands = append(out.Commands, c.wire(st.scr, now))
	}
	return out, nil
}

// noIntegration is RUN's answer for a program that sends no marks.
func (d *Daemon) noIntegration() error {
	if d.cfg.ShellIntegration {
		return wire.CodedError{Code: wire.ErrNoShellIntegration, Text: "the shell was started with --shell-integration but waits for input without having sent a shell-integration mark (OSC 133): its startup files may have failed, or replaced the prompt hooks (look at the screen); use INPUT and WAIT meanwhile"}
	}
	return wire.CodedError{Code: wire.ErrNoShellIntegration, Text: "the session's program sends no shell-integration marks (OSC 133), so RUN cannot tell where a command ends: start the shell with `ptyplex start --shell-integration -- bash` (or zsh), or use INPUT and WAIT"}
}

// run answers RUN: it waits for the prompt, types the command, waits for
// the shell to report its end and answers its status and its output.
// With timeout_ms it answers when that passes first, leaving the command
// running. It runs on its own goroutine (async.go), as WAIT does.
func (d *Daemon) run(f wire.Fields, gone <-chan struct{}) (any, error) {
	text, ok, err := f.Str("command")
	if err != nil {
		return nil, err
	}
	if !ok || strings.TrimSpace(text) == "" {
		return nil, wire.Invalidf("RUN needs a non-empty 'command'")
	}
	if strings.ContainsAny(text, "\r\n") {
		return nil, wire.Invalidf("field 'command' must be one line: the shell would run each line as a command of its own (join them with ';' or '&&')")
	}
	limit, hasTimeout, err := f.Timeout("timeout_ms")
	if err != nil {
		return nil, err
	}
	maxChars, hasBudget, err := f.Int("max_chars")
	if err != nil {
		return nil, err
	}
	if hasBudget && maxChars < 1 {
		return nil, wire.Invalidf("field 'max_chars' must be at least 1")
	}
	keep, hasKeep, err := f.Int("keep_lines")
	if err != nil {
		return nil, err
	}
	if hasKeep && (keep < 1 || keep > wire.MaxKeepLines) {
		return nil, wire.Invalidf("field 'keep_lines' must be 1..%d", wire.MaxKeepLines)
	}
	if hasKeep {
		// Output longer than the scrollback loses its first lines: the
		// scrollback grows (and stays grown) to hold this many.
		d.st.mu.Lock()
		d.st.scr.GrowScrollback(keep)
		d.st.mu.Unlock()
	}
	begin := time.Now()
	var timeout <-chan time.Time
	if hasTimeout {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	answer := func(out wire.RunData) wire.RunData {
		out.Command = text
		out.DurationMS = time.Since(begin).Milliseconds()
		if hasBudget && utf8.RuneCountInString(out.Output) > maxChars {
			r := []rune(out.Output)
			out.OutputCut = len(r) - maxChars
			out.Output = string(r[out.OutputCut:])
		}
		return out
	}
	st := d.st
	select {
	case d.runTurn <- struct{}{}:
		defer func() { <-d.runTurn }()
	case <-gone:
		return nil, errClientGone
	case <-d.done:
		return nil, wire.RequestError("Daemon is shutting down")
	case <-timeout:
		// Another RUN holds the prompt: its command still runs.
		return answer(d.promptTimeout()), nil
	}

	// The prompt first: typed while a command runs, the text would go to
	// that command's input.
	var quietSince time.Time
	var quietGen int64 = -1
	var waitSince time.Time
	var waitGen int64 = -1
	for {
		st.mu.Lock()
		exited, code := st.exited, st.exitCode
		ready, marked := st.cmds.atPrompt(), st.cmds.any
		before := st.cmds.nextID
		changed := st.changed
		st.mu.Unlock()
		if exited {
			// Nothing was typed: this command has no status, and the
			// shell's would pass for its own.
			return nil, wire.RequestError(fmt.Sprintf("Process not running: the shell exited (status %d) before the command was typed; start a new session to run more commands", code))
		}
		if ready {
			// The command it starts is named by this text, not by the
			// screen's drawing of it; set before typing, since the
			// shell's marks may be read before typeCommand returns.
			st.mu.Lock()
			st.cmds.typed = text
			st.mu.Unlock()
			defer func() {
				st.mu.Lock()
				st.cmds.typed = ""
				st.mu.Unlock()
			}()
			if err := d.typeCommand(text); err != nil {
				return nil, err
			}
			return d.awaitCommand(before, answer, timeout, gone)
		}
		var poll <-chan time.Time
		if !marked {
			// A shell with integration marks its prompt before it reads
			// the terminal: once the program waits for input without
			// having sent a mark, none is coming.
			// As WAIT "input" does, it must say so for inputSettle with no
			// output between: zsh reads the terminal once at startup,
			// before its first prompt.
			s := d.sampleInput()
			switch {
			case s.state == ptyhost.InputWaiting && s.drained:
				if waitGen != s.gen {
					waitSince, waitGen = time.Now(), s.gen
				} else if time.Since(waitSince) >= inputSettle {
					return nil, d.noIntegration()
				}
			case s.state == ptyhost.InputUnknown:
				waitGen = -1
				if s.gen != quietGen || !s.drained {
					// (the clock restarts on output, as WAIT's fallback does)
					quietSince, quietGen = time.Now(), s.gen
				} else if time.Since(quietSince) >= wire.InputQuietFallback {
					return nil, d.noIntegration()
				}
			default:
				waitGen = -1
			}
			poll = time.After(inputPoll)
		}
		select {
		case <-changed:
		case <-poll:
		case <-gone:
			return nil, errClientGone
		case <-d.done:
			return nil, wire.RequestError("Daemon is shutting down")
		case <-timeout:
			return answer(d.promptTimeout()), nil
		}
	}
}

// promptTimeout is RUN's answer when its timeout passed before the
// prompt came: nothing was typed, so there is no output of this command
// (what the earlier one printed is not), and id names the earlier command
// that still runs, when the shell marked one.
func (d *Daemon) promptTimeout() wire.RunData {
	out := wire.RunData{TimedOut: true, Running: true, WaitingFor: "prompt"}
	d.st.mu.Lock()
	if c := d.st.cmds.running; c != nil {
		out.ID = c.id
	}
	d.st.mu.Unlock()
	return out
}

// setOutput sets out's output to c's, and says why lines are missing.
func setOutput(out *wire.RunData, c *command, scr *screen.Screen) {
	out.Output, out.LinesLost = c.output(scr)
	// Lines pushed out of the top leave the scrollback full; lines
	// missing from one that is not were erased with it (ED 3, as `clear`
	// sends), which keep_lines cannot prevent.
	out.ScrollbackCleared = out.LinesLost > 0 && scr.ScrollbackLen() < scr.ScrollbackCap()
}

// typeCommand types text at the prompt and presses Enter. With bracketed
// paste on (bash 5.1 and zsh turn it on at the prompt) the text goes as a
// paste, so that a tab in it is a tab and not a completion request.
func (d *Daemon) typeCommand(text string) error {
	d.st.mu.Lock()
	paste := d.st.scr.BracketedPaste()
	d.st.mu.Unlock()
	b := text + "\r"
	if paste {
		b = "\x1b[200~" + text + "\x1b[201~\r"
	}
	n, _, err := d.writeInput([]byte(b))
	if err != nil {
		return wire.RequestError(fmt.Sprintf("Failed to type the command: %v (%d of %d bytes sent)", err, n, len(b)))
	}
	return nil
}

// awaitCommand waits for the first command after id before to end.
func (d *Daemon) awaitCommand(before int, answer func(wire.RunData) wire.RunData, timeout <-chan time.Time, gone <-chan struct{}) (any, error) {
	st := d.st
	for {
		st.mu.Lock()
		c := st.cmds.after(before)
		exited, code := st.exited, st.exitCode
		changed := st.changed
		var out wire.RunData
		done := false
		if c != nil && !c.running && !c.shellExited {
			out.ID = c.id
			if c.hasStatus {
				s := c.status
				out.ExitCode = &s
			}
			setOutput(&out, c, st.scr)
			done = true
		} else if exited {
			out.ShellExited, out.ExitCode = true, &code
			if c != nil {
				out.ID = c.id
				setOutput(&out, c, st.scr)
			}
			done = true
		}
		st.mu.Unlock()
		if done {
			return answer(out), nil
		}
		select {
		case <-changed:
		case <-gone:
			return nil, errClientGone
		case <-d.done:
			return nil, wire.RequestError("Daemon is shutting down")
		case <-timeout:
			out := wire.RunData{TimedOut: true, Running: true, WaitingFor: "end"}
			st.mu.Lock()
			if c := st.cmds.after(before); c != nil {
				out.ID = c.id
				setOutput(&out, c, st.scr)
			}
			st.mu.Unlock()
			return answer(out), nil
		}
	}
}
