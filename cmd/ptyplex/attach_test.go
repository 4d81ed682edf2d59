//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ptyplex/ptyplex/screen"
)

// attachTerm is `ptyplex attach` running on a real PTY, whose output is
// fed into an emulator: what a person at that terminal would see.
type attachTerm struct {
	t       *testing.T
	master  *os.File
	mu      sync.Mutex
	scr     *screen.Screen
	raw     []byte        // every byte attach wrote to its terminal
	changed chan struct{} // closed and replaced on every output
	exit    chan int
}

func attachPTY(t *testing.T, cols, rows int, args ...string) *attachTerm {
	t.Helper()
	m, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := pty.Setsize(tty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"attach"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	a := &attachTerm{t: t, master: m, scr: screen.New(cols, rows, screen.Options{}), changed: make(chan struct{}), exit: make(chan int, 1)}
	t.Cleanup(func() { cmd.Process.Kill() })
	go a.read()
	go func() {
		cmd.Wait()
		a.exit <- cmd.ProcessState.ExitCode()
	}()
	return a
}

// read feeds the terminal's output to the emulator until the PTY closes.
func (a *attachTerm) read() {
	buf := make([]byte, 32<<10)
	for {
		n, err := a.master.Read(buf)
		a.mu.Lock()
		a.scr.Write(buf[:n])
		a.raw = append(a.raw, buf[:n]...)
		close(a.changed)
		a.changed = make(chan struct{})
		a.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitScreen waits until pred holds for the terminal's text.
func (a *attachTerm) waitScreen(what string, pred func(text string) bool) string {
	a.t.Helper()
	end := time.After(deadline)
	for {
		a.mu.Lock()
		text, ch := a.scr.Text(), a.changed
		a.mu.Unlock()
		if pred(text) {
			return text
		}
		select {
		case <-ch:
		case <-end:
			a.t.Fatalf("the attached terminal never showed %s; it shows:\n%s", what, text)
		}
	}
}

func (a *attachTerm) waitText(s string) string {
	a.t.Helper()
	return a.waitScreen(`"`+s+`"`, func(text string) bool { return strings.Contains(text, s) })
}

func (a *attachTerm) typeKeys(s string) {
	a.t.Helper()
	if _, err := a.master.Write([]byte(s)); err != nil {
		a.t.Fatal(err)
	}
}

func (a *attachTerm) waitExit() int {
	a.t.Helper()
	select {
	case c := <-a.exit:
		return c
	case <-time.After(deadline):
		a.t.Fatal("attach did not end")
		return -1
	}
}

// sessionCursor is the session's cursor (0-based) from output --json.
func sessionCursor(t *testing.T, s *sess) (row, col int) {
	var out struct{ Cursor struct{ Row, Col int } }
	if err := json.Unmarshal([]byte(s.ok("output", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	return out.Cursor.Row, out.Cursor.Col
}

func TestAttach(t *testing.T) {
	t.Parallel()
	s := shell(t)
	s.input(`printf '\033[31mRED\033[0m plain\n'\r`)
	s.waitFor("the red line and the next prompt", func(scr string) bool { return strings.Contains(scr, "RED plain\n$") })
	// A terminal larger than the session: without --resize the session
	// keeps its size.
	a := attachPTY(t, 100, 30, "--socket", s.sock)
	a.waitText("RED plain\n$")
	a.mu.Lock()
	var redLine string
	for r := 1; r <= 24; r++ {
		if l := a.scr.Line(r, true); strings.Contains(l, "RED") {
			redLine = l
		}
	}
	row, col := a.scr.Cursor()
	a.mu.Unlock()
	if !strings.Contains(redLine, "\x1b[31mRED") {
		t.Errorf("the repaint lost the colour: %q", redLine)
	}
	if wr, wc := sessionCursor(t, s); row != wr || col != wc {
		t.Errorf("cursor after the repaint at %d,%d; the session's is at %d,%d", row, col, wr, wc)
	}
	if out := s.ok("status"); !strings.Contains(out, "Size: 80x24") {
		t.Errorf("attach without --resize changed the size:\n%s", out)
	}
	// Keys typed on the attached terminal reach the program; its output
	// comes back live.
	a.typeKeys("echo via-$((6*7))\r")
	a.waitText("\nvia-42\n")
	s.waitText("\nvia-42\n")
	// Agent requests keep working, and what they type shows everywhere.
	s.input("echo from-agent\r")
	a.waitText("\nfrom-agent\n")
	// A second, read-only attacher sees the same; its keys go nowhere.
	b := attachPTY(t, 80, 24, "--socket", s.sock, "--read-only")
	b.waitText("\nfrom-agent\n")
	b.typeKeys("echo ro-typed\r")
	s.input("echo sentinel\r")
	a.waitText("\nsentinel\n")
	b.waitText("\nsentinel\n")
	if scr := s.screen(); strings.Contains(scr, "ro-typed") {
		t.Errorf("a read-only attacher typed:\n%s", scr)
	}
	// Ctrl-\ detaches; the program keeps running.
	a.typeKeys("\x1c")
	if c := a.waitExit(); c != 0 {
		t.Errorf("attach exit code after detach: %d", c)
	}
	a.waitText("[detached from")
	if out := s.ok("status"); !strings.Contains(out, "Running: true") {
		t.Fatalf("program gone after detach:\n%s", out)
	}
	// The program's exit ends the remaining attachment.
	s.input("exit 7\r")
	if c := b.waitExit(); c != 0 {
		t.Errorf("attach exit code after the program's exit: %d", c)
	}
	b.waitText("[the program exited with code 7]")
}

func TestAttachResizeAndDetachKey(t *testing.T) {
	t.Parallel()
	// -isig: Ctrl-\ is a plain byte for the program, which cat -v shows.
	s := start(t, "--size", "80x24", "--", "sh", "-c", "stty -isig; echo ready; exec cat -v")
	s.waitText("ready")
	s.input("marker\r")
	s.waitText("marker")
	a := attachPTY(t, 100, 30, "--socket", s.sock, "--resize", "--detach-key", "C-]")
	a.waitText("marker")
	if out := s.ok("status"); !strings.Contains(out, "Size: 100x30") {
		t.Errorf("--resize did not resize the session to the terminal:\n%s", out)
	}
	a.typeKeys("typed\x1c\r") // Ctrl-\ is an ordinary key now: cat gets it
	s.waitText("typed^\\\n")
	a.typeKeys("\x1d")
	if c := a.waitExit(); c != 0 {
		t.Errorf("attach exit code: %d", c)
	}
	if r := s.run("attach", "--detach-key", "Up"); r.code != exitUsage {
		t.Errorf("a multi-byte detach key: %v", r)
	}
}

func TestAttachNeedsATerminal(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	r := s.run("attach")
	if r.code != exitFail || !strings.Contains(r.stderr, "needs a terminal") {
		t.Errorf("attach without a terminal: %v", r)
	}
}

// The repaint puts the attached terminal in the program's modes, so that
// its arrow keys send what the program expects.
func TestAttachRepaintsModes(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", `printf '\033[?1049h\033[?1h\033[?2004h\033[5;10HFULL'; exec cat`)
	s.waitText("FULL")
	a := attachPTY(t, 80, 24, "--socket", s.sock)
	a.waitText("FULL")
	a.mu.Lock()
	alt, app, paste := a.scr.AltScreen(), a.scr.AppCursorKeys(), a.scr.BracketedPaste()
	row, col := a.scr.Cursor()
	a.mu.Unlock()
	if !alt || !app || !paste {
		t.Errorf("modes after the repaint: alt screen %v, app cursor keys %v, bracketed paste %v", alt, app, paste)
	}
	if row != 4 || col != 13 {
		t.Errorf("cursor at %d,%d, want 4,13", row, col)
	}
}

// With --resize the session follows the attached terminal's size: the
// program gets SIGWINCH and sees the new size each time it changes.
func TestAttachResizeFollowsTheTerminal(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	s := start(t, "--size", "80x24", "--", "python3", "-c", `
import os, signal
def winch(*_):
    c, r = os.get_terminal_size()
    print("size %dx%d" % (c, r), flush=True)
signal.signal(signal.SIGWINCH, winch)
print("ready", flush=True)
while True:
    signal.pause()
`)
	s.waitText("ready")
	a := attachPTY(t, 100, 30, "--socket", s.sock, "--resize")
	a.waitText("size 100x30")
	if err := pty.Setsize(a.master, &pty.Winsize{Cols: 90, Rows: 20}); err != nil {
		t.Fatal(err)
	}
	a.waitText("size 90x20")
	s.waitText("size 90x20")
}
