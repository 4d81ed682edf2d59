//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/session/keys"
	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/session/wire"
	"golang.org/x/sys/unix"
)

func init() {
	register("attach", "make your terminal the session's terminal (detach with Ctrl-\\)", runAttach)
}

const attachAbout = `
Makes your terminal the session's terminal, as 'tmux attach' does: the
screen is repainted from the session's emulator (colours, cursor and the
modes that change what keys send), then you see the program's output live
and your keys go to the program. Arrow keys follow the program's
application cursor-key mode, since your terminal is switched to it.

Press the detach key (Ctrl-\ unless --detach-key says otherwise) to leave:
the program keeps running, and you can attach again later. When the
program exits, attach prints its exit code and returns.

Several people may attach at once; each sees the same output, and the keys
of all of them (except --read-only ones) reach the program. Agents and
scripts keep working meanwhile: input, output, wait and the rest are served
as usual, and what they type shows up on every attached terminal.

Size: the session keeps its size (start --size, or RESIZE) unless you pass
--resize, which resizes the session to your terminal now and whenever your
terminal is resized (the program gets SIGWINCH). Without --resize, a
terminal smaller than the session shows the program's output wrapped or cut.

--read-only watches without typing: only the detach key is read.

What reaches your terminal is what it needs to draw the screen: text,
colours, cursor moves, erases, scroll regions and the modes that change
what keys send (the alternate screen, bracketed paste, mouse reporting).
The program's other sequences are dropped, --read-only included: its
clipboard writes (OSC 52) unless --allow-clipboard, its window titles
unless --allow-title, every DCS, SOS, PM and APC string, and the requests
that make a terminal type an answer (device attributes, cursor and status
reports, title and window reports, mode and colour queries). The session
answers the queries a program relies on itself, so the program still
gets its answer, and your terminal never types one into the session.

A terminal of a persistent sidecar (ptyplex-sidecar --persist NAME, see
docs/persist.md) is reached with --persist NAME --id ID instead of
--socket: as its holder (your keys go to the program; a host that held it
is detached, and attaches again when it wants it back), or with --view as
a viewer: you see its output, from the start of its journal (or a repaint
of its screen when the journal lost bytes), and type nothing; the holder
and any other viewers go on as before. A viewer that falls behind the
output is shown a repaint and goes on from there. --resize applies to a
holder only.

Example:
  ptyplex attach --socket /tmp/interminai-XXXX/socket --read-only
  ptyplex attach --persist work --id build --view`

func runAttach(args []string) int {
	c := newCLI("attach", "ptyplex attach (--socket PATH [--read-only] | --persist NAME --id ID [--view]) [--resize] [--detach-key KEY] [--allow-clipboard] [--allow-title]", attachAbout, true)
	persistName := c.fs.String("persist", "", "attach a terminal of the persistent sidecar `NAME` instead of a session (with --id)")
	persistID := c.fs.String("id", "", "the persistent terminal's `ID` (with --persist)")
	view := c.fs.Bool("view", false, "with --persist: view the terminal (its output only) instead of holding it")
	readOnly := c.fs.Bool("read-only", false, "watch without sending keys to the program")
	resize := c.fs.Bool("resize", false, "resize the session to this terminal, now and on every resize")
	allowClipboard := c.fs.Bool("allow-clipboard", false, "let the program set your clipboard (OSC 52 writes; reads stay blocked)")
	allowTitle := c.fs.Bool("allow-title", false, "let the program set your terminal's title (OSC 0, 1 and 2)")
	detachName := c.fs.String("detach-key", `C-\`, "`KEY` that detaches, as in input --keys (a single byte: C-x, C-], ...)")
	if done, code := c.parse(args); done {
		return code
	}
	if *persistName != "" {
		if c.socket != "" || *readOnly {
			return c.usageError("--persist attaches a persistent terminal: it takes neither --socket nor --read-only (use --view)")
		}
		if err := checkPersistID(*persistID); err != nil {
			return c.usageError("%v", err)
		}
	} else if *persistID != "" || *view {
		return c.usageError("--id and --view go with --persist NAME")
	}
	if *persistName == "" && !c.needSocket() {
		return exitUsage
	}
	if c.fs.NArg() > 0 {
		return c.usageError("unexpected arguments: %v", c.fs.Args())
	}
	dk, err := keys.Encode([]string{*detachName}, false)
	if err != nil || len(dk) != 1 {
		return c.usageError("invalid --detach-key %q: it must be a key that sends one byte, such as C-\\ or C-]", *detachName)
	}
	if *persistName != "" {
		return persistAttach{name: *persistName, id: *persistID, view: *view, resize: *resize, detachKey: dk[0],
			filter: termfilter.Options{AllowClipboard: *allowClipboard, AllowTitle: *allowTitle}}.run()
	}
	if _, err := os.Stat(c.socket); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		printError(fmt.Errorf("connect to %s: %w", c.socket, err))
		return exitFail
	}
	in := int(os.Stdin.Fd())
	saved, err := unix.IoctlGetTermios(in, ioctlGetTermios)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: attach needs a terminal on stdin: %v\n", err)
		return exitFail
	}
	if *resize { // first, so that the repaint has the new size
		stopResize := followResize(c.socket)
		defer stopResize()
	}
	conn, rest, size, ok := openAttach(c.socket, *readOnly)
	if !ok {
		return exitFail
	}
	defer conn.Close()
	if err := makeRaw(in, saved); err != nil {
		fmt.Fprintf(os.Stderr, "Error: cannot put the terminal in raw mode: %v\n", err)
		return exitFail
	}
	a := &attachment{conn: conn, detachKey: dk[0], readOnly: *readOnly,
		filter: termfilter.Options{AllowClipboard: *allowClipboard, AllowTitle: *allowTitle}}
	why := a.run(rest)
	unix.IoctlSetTermios(in, ioctlSetTermios, saved)
	return finishAttach(c.socket, why, size)
}

// openAttach sends ATTACH and reads its answer line; rest yields the raw
// stream after it.
func openAttach(socket string, readOnly bool) (*net.UnixConn, io.Reader, wire.Size, bool) {
	var size wire.Size
	// wire.Dial refuses a socket served by another user before we send
	// a byte: from here on every key typed goes to whoever serves it.
	conn, err := wire.Dial(context.Background(), socket)
	if err != nil {
		printError(err)
		return nil, nil, size, false
	}
	req, _ := json.Marshal(map[string]any{"type": "ATTACH", "read_only": readOnly})
	if _, err := conn.Write(append(req, '\n')); err != nil {
		conn.Close()
		printError(fmt.Errorf("send request to %s: %w", socket, err))
		return nil, nil, size, false
	}
	br := bufio.NewReader(conn)
	line, err := br.ReadBytes('\n')
	var r wire.Response
	if err == nil {
		err = json.Unmarshal(line, &r)
	}
	if err != nil {
		conn.Close()
		printError(fmt.Errorf("the daemon at %s did not answer ATTACH (an older ptyplex?): %v", socket, err))
		return nil, nil, size, false
	}
	if r.Status != "ok" {
		conn.Close()
		printError(r.Err())
		return nil, nil, size, false
	}
	var d wire.AttachData
	json.Unmarshal(r.Data, &d)
	return conn, br, d.Size, true
}

// Why an attachment ended.
const (
	endDetached = iota // the user pressed the detach key
	endStream          // the daemon closed the stream: the program's output ended, or stop
	endSignal          // we got SIGTERM or SIGHUP
)

// attachment is one attached terminal: output from the daemon to stdout,
// keys from stdin to the daemon.
type attachment struct {
	conn      *net.UnixConn
	detachKey byte
	readOnly  bool
	filter    termfilter.Options
}

// run copies both ways until the user detaches, the stream ends or a
// signal comes. The stdin reader may stay blocked in read afterwards; the
// process exits soon after.
func (a *attachment) run(stream io.Reader) int {
	var send func([]byte) error // read-only attachments send nothing
	if !a.readOnly {
		send = func(b []byte) error { _, err := a.conn.Write(b); return err }
	}
	return attachLoop(func() {
		// The program's bytes go through the filter, so that only what
		// draws the screen reaches the user's terminal.
		io.Copy(termfilter.NewWriter(os.Stdout, a.filter), stream)
	}, send, a.detachKey)
}

// attachLoop runs output (which returns when the program's stream ends)
// and sends the user's keys with send (nil: none are sent) up to the
// detach key, until the user detaches, the stream ends or a signal comes;
// it says which.
func attachLoop(output func(), send func([]byte) error, detachKey byte) int {
	ended := make(chan struct{})
	go func() {
		output()
		close(ended)
	}()
	detached := make(chan struct{})
	go copyKeys(detachKey, send, detached)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	defer signal.Stop(sigs)
	select {
	case <-detached:
		return endDetached
	case <-ended:
		return endStream
	case <-sigs:
		return endSignal
	}
}

// copyKeys sends stdin with send up to the detach key, then closes
// detached. A failed send ends it: the stream is gone, and attachLoop
// hears it from the output.
func copyKeys(detachKey byte, send func([]byte) error, detached chan<- struct{}) {
	buf := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(buf)
		b := buf[:n]
		i := bytes.IndexByte(b, detachKey)
		if i >= 0 {
			b = b[:i]
		}
		if len(b) > 0 && send != nil {
			if send(b) != nil {
				return
			}
		}
		if i >= 0 || err != nil {
			close(detached)
			return
		}
	}
}

// terminalReset undoes the modes a repaint or the program may have set on
// the user's terminal: every mode the output filter lets through, the
// scroll region and margins, the cursor style and the character set.
const terminalReset = "\x1b[0m\x1b[r\x1b[?69l\x1b[?6l\x1b[?5l\x1b[4l\x1b[20l\x1b[?1l\x1b>" +
	"\x1b[?2004l\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l" +
	"\x1b[?2026l\x1b[?7h\x1b[?25h\x1b[0 q\x0f\x1b(B"

// finishAttach restores the user's terminal and says how the attachment
// ended.
func finishAttach(socket string, why int, size wire.Size) int {
	var st wire.StatusData
	stErr := wire.CallData(socket, map[string]any{"type": "STATUS"}, &st)
	reset := terminalReset
	if stErr != nil || st.AltScreen {
		// First: leaving the alternate screen restores the cursor state
		// saved on entering it, origin mode included, which the resets
		// after it must override.
		reset = "\x1b[?1049l" + reset
	}
	rows := size.Rows
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Row > 0 {
		rows = int(ws.Row)
	}
	fmt.Printf("%s\x1b[%d;1H\r\n", reset, max(rows, 1))
	switch why {
	case endDetached:
		fmt.Printf("[detached from %s; the program keeps running]\r\n", socket)
	case endSignal:
		fmt.Printf("[attach ended by a signal; the program keeps running]\r\n")
	default:
		fmt.Printf("%s\r\n", streamEnd(socket))
	}
	return exitOK
}

// streamEnd says why the daemon closed the stream. The PTY's end of file
// (which ends the stream) can come just before the daemon has recorded the
// exit, so this waits for the exit briefly rather than asking STATUS.
func streamEnd(socket string) string {
	var w wire.WaitData
	err := wire.CallData(socket, map[string]any{"type": "WAIT", "timeout_ms": 5000}, &w)
	switch {
	case err != nil:
		return fmt.Sprintf("[the session at %s ended]", socket)
	case w.TimedOut || w.ExitCode == nil:
		return "[the program closed its terminal]"
	default:
		return fmt.Sprintf("[the program exited with code %d]", *w.ExitCode)
	}
}

// makeRaw puts the terminal in raw mode (as cfmakeraw does): every key,
// Ctrl-C and Ctrl-Z included, goes to the program.
func makeRaw(fd int, saved *unix.Termios) error {
	raw := *saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(fd, ioctlSetTermios, &raw)
}

// followResize resizes the session to our terminal now and on every
// SIGWINCH, until the returned stop is called.
func followResize(socket string) (stop func()) {
	return followSize(func(cols, rows uint16) {
		wire.Call(socket, map[string]any{"type": "RESIZE", "cols": int(cols), "rows": int(rows)})
	})
}

// followSize calls resize with our terminal's size now and on every
// SIGWINCH, until the returned stop is called.
func followSize(resize func(cols, rows uint16)) (stop func()) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	done := make(chan struct{})
	apply := func() {
		ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ)
		if err != nil || ws.Col == 0 || ws.Row == 0 {
			return
		}
		resize(ws.Col, ws.Row)
	}
	apply()
	go func() {
		for {
			select {
			case <-winch:
				apply()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(winch); close(done) }
}
