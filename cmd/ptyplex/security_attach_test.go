//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/session/wire"
)

// squatter is another user's listener that answers ATTACH the way a real
// daemon does and then keeps every byte it is sent. It prints "conn" when
// it accepts, "got HEX" for every read with data and "closed" at the end
// of each connection, so a test can tell exactly what reached it.
const squatter = `
import os, socket, sys
path = sys.argv[1]
if os.path.lexists(path):
    os.unlink(path)  # a dead daemon's socket, in a directory anyone may write
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    print("conn", flush=True)
    answered = False
    while True:
        try:
            b = c.recv(65536)
        except OSError:
            b = b""
        if not b:
            break
        print("got", b.hex(), flush=True)
        if not answered and b"\n" in b:
            answered = True
            try:
                c.sendall(b'{"status":"ok","data":{"size":{"rows":24,"cols":80}}}\n\x1b[H\x1b[2JPassword for root: ')
            except OSError:
                pass
    print("closed", flush=True)
    c.close()
`

// startSquatter runs the squatter as attacker on sock and returns the lines
// it prints after "ready".
func startSquatter(t *testing.T, attacker account, sock string) <-chan string {
	t.Helper()
	py := attacker.command("python3", "-c", squatter, sock)
	out, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatalf("python3 (the attacker): %v", err)
	}
	t.Cleanup(func() { py.Process.Kill(); py.Wait() })
	br := bufio.NewReader(out)
	if line, err := br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the squatter did not start: %q %v", line, err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				lines <- strings.TrimSpace(line)
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// decodeGot turns the squatter's "got HEX" into the bytes it received.
func decodeGot(line string) string {
	var b []byte
	fmt.Sscanf(strings.TrimPrefix(line, "got "), "%x", &b)
	return string(b)
}

// noBytes fails the test if the squatter received anything, and waits for
// it to see the connection close.
func noBytes(t *testing.T, events <-chan string, closed bool) {
	t.Helper()
	for !closed {
		select {
		case ev := <-events:
			if strings.HasPrefix(ev, "got ") {
				t.Fatalf("the squatter received %q", decodeGot(ev))
			}
			closed = ev == "closed"
		case <-time.After(deadline):
			t.Fatal("the squatter never saw the connection close")
		}
	}
}

// TestSecurityAttachRefusesForeignListener: `attach` to a socket that
// another user serves must refuse before it sends anything, so that the
// keys typed on the attached terminal (a password, say) never reach that
// user. Before the check, attach sent ATTACH, took the fake answer, put
// the terminal in raw mode and forwarded every key.
func TestSecurityAttachRefusesForeignListener(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	sock := filepath.Join(sharedDir(t, os.ModeSticky|0o777), "session.sock")
	events := startSquatter(t, attacker, sock)

	// Wide enough that the error line does not wrap on the terminal.
	a := attachPTY(t, 400, 24, "--socket", sock)
	end := time.After(deadline)
	var code int
	closed := false
wait:
	for {
		select {
		case code = <-a.exit:
			break wait
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the squatter ended early")
			}
			if !strings.HasPrefix(ev, "got ") {
				closed = closed || ev == "closed"
				continue // attach may still check and close
			}
			// attach sent a request to another user's socket. Show
			// what that costs: a typed password reaches them too.
			a.typeKeys("hunter2\r")
			got := decodeGot(ev)
			for !strings.Contains(got, "hunter2") {
				select {
				case ev := <-events:
					got += decodeGot(ev)
				case <-time.After(deadline):
					t.Fatalf("attach sent %q to another user's listener", got)
				}
			}
			t.Fatalf("attach talked to another user's listener, which received %q", got)
		case <-end:
			a.mu.Lock()
			text := a.scr.Text()
			a.mu.Unlock()
			t.Fatalf("attach neither refused nor talked to the listener; the terminal shows:\n%s", text)
		}
	}
	if code == 0 {
		t.Errorf("attach to another user's socket exited 0")
	}
	want := fmt.Sprintf("refusing to talk to %s: it is served by user %s (uid %d)", sock, attacker.name, attacker.uid)
	a.waitText(want)
	// The squatter saw the connection open and close with no byte on it.
	noBytes(t, events, closed)
}

// TestSecurityListRefusesForeignListener: list probes every registered
// session with STATUS. When a session's daemon died and another user put
// a listener at its socket path (a directory anyone may write in), list
// must neither send it a request nor show its answer as our session's
// state. Before the check it sent STATUS and listed the fake as ours.
func TestSecurityListRefusesForeignListener(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	env := registryEnv(t)
	sock := filepath.Join(sharedDir(t, 0o777), "session.sock")
	s := startEnv(t, env, "--socket", sock, "--", "sleep", "600")
	syscall.Kill(s.pid, syscall.SIGKILL) // its registry entry and socket file stay
	if !waitGone(s.pid, deadline) {
		t.Fatalf("daemon %d survived SIGKILL", s.pid)
	}
	events := startSquatter(t, attacker, sock)
	l, ok := listJSON(t, env)[sock]
	if !ok {
		t.Fatalf("list does not show the session at %s", sock)
	}
	want := fmt.Sprintf("refusing to talk to %s: it is served by user %s (uid %d)", sock, attacker.name, attacker.uid)
	if l.State != wire.StateUnreachable || !strings.Contains(l.Problem, want) {
		t.Errorf("list shows another user's listener as state %q, problem %q; want %q and %q",
			l.State, l.Problem, wire.StateUnreachable, want)
	}
	noBytes(t, events, false)
}

// hostileProgram writes to its terminal what a program should not get to
// do to a user who attaches: set their clipboard and title, send DCS
// strings (a DECRQSS request), ask for the title back (a permissive
// terminal would type it into the session), and asks for the device
// attributes; the session itself answers the DECRQSS and the DA1. It
// waits for a line before it starts, so that the test can attach first,
// and prints the answers it got, then "done".
const hostileProgram = `
import os, sys, termios, tty
print("ready", flush=True)
sys.stdin.readline()
saved = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"\x1b]52;c;aHVudGVyMg==\x07\x1b]2;owned-title\x07\x1bP$qm\x1b\\\x1b[21t\x1b[14t\x1b[c")
answer = b""
while not answer.endswith(b"c"):
    answer += os.read(0, 1)
termios.tcsetattr(0, termios.TCSANOW, saved)
print("answer", answer.hex(), "done", flush=True)
sys.stdin.readline()
`

// hostileBytes are the sequences hostileProgram writes, none of which may
// reach an attached terminal or output --follow.
var hostileBytes = []string{"\x1b]52;", "\x1b]2;", "owned-title", "\x1bP", "$qm", "\x1b[21t", "\x1b[14t", "\x1b[c"}

// TestSecurityAttachFiltersOutput: attach writes what the emulator
// understood, not the program's raw bytes, --read-only included; the
// program's query is answered once, by the session; --allow-clipboard
// lets the clipboard write through and nothing else, --allow-title the
// title and nothing else (no clipboard write, no DCS). output --follow
// prints none of it either. Before the filter, attach copied every byte.
func TestSecurityAttachFiltersOutput(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	s := start(t, "--", "python3", "-c", hostileProgram)
	s.waitText("ready")
	plain := attachPTY(t, 80, 24, "--socket", s.sock)
	ro := attachPTY(t, 80, 24, "--socket", s.sock, "--read-only")
	clip := attachPTY(t, 80, 24, "--socket", s.sock, "--allow-clipboard")
	title := attachPTY(t, 80, 24, "--socket", s.sock, "--allow-title")
	for _, a := range []*attachTerm{plain, ro, clip, title} {
		a.waitText("ready")
	}
	follow := exec.Command(bin, "output", "--socket", s.sock, "--follow")
	var followOut strings.Builder
	follow.Stdout = &followOut
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follow.Process.Kill() })

	s.input("\r")
	// The answers are the session's own (its emulator's DECRQSS and DA1):
	// one of each, and the attached terminals never saw the questions.
	want := "answer " + hex.EncodeToString([]byte("\x1bP1$r0m\x1b\\\x1b[?62;22c")) + " done"
	s.waitText(want)
	for _, a := range []*attachTerm{plain, ro, clip, title} {
		a.waitText(want)
	}
	s.input("\r") // the program exits; output --follow ends with it
	if err := waitCmd(follow); err != nil {
		t.Fatalf("output --follow: %v\n%s", err, followOut.String())
	}
	check := func(who, got string, allowed ...string) {
		t.Helper()
		for _, a := range allowed {
			if !strings.Contains(got, a) {
				t.Errorf("%s did not pass %q:\n%q", who, a, got)
			}
			got = strings.ReplaceAll(got, a, "")
		}
		for _, h := range hostileBytes {
			if strings.Contains(got, h) {
				t.Errorf("%s wrote %q to the terminal:\n%q", who, h, got)
			}
		}
	}
	for name, a := range map[string]*attachTerm{"attach": plain, "attach --read-only": ro, "attach --allow-clipboard": clip, "attach --allow-title": title} {
		a.mu.Lock()
		raw := string(a.raw)
		a.mu.Unlock()
		switch name {
		case "attach --allow-clipboard":
			check(name, raw, "\x1b]52;c;aHVudGVyMg==\x07")
		case "attach --allow-title":
			check(name, raw, "\x1b]2;owned-title\x07")
		default:
			check(name, raw)
		}
	}
	check("output --follow", followOut.String())
}

// waitCmd waits for cmd to end, within the deadline.
func waitCmd(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(3 * deadline):
		cmd.Process.Kill()
		return fmt.Errorf("still running after %v", 3*deadline)
	}
}

// TestSecurityOutputEscapesBidi: the bidi controls a program prints reach
// output's reader escaped, in every form output prints, so that a line
// cannot show one text and be another; --json keeps the exact text in
// \u escapes. Before, output printed them as they were.
func TestSecurityOutputEscapesBidi(t *testing.T) {
	t.Parallel()
	// The Trojan Source example: read left to right, the comment seems
	// to end before "admin"; the bytes say otherwise.
	line := "access = \"user\u202e \u2066// admin\u2069\u2066\" \u202a\u202b\u202c\u202d\u2067\u2068 t\U000e0041\u2028\u2029 end"
	shown := "access = \"user<U+202E> <U+2066>// admin<U+2069><U+2066>\" <U+202A><U+202B><U+202C><U+202D><U+2067><U+2068> t<U+E0041><U+2028><U+2029> end"
	s := start(t, "--", "sh", "-c", "printf '%s\\n' \"$0\"; read x", line)
	s.waitText("end")
	bidi := func(got string) bool { return strings.ContainsFunc(got, termfilter.IsInvisible) }
	for _, args := range [][]string{{"--no-color"}, {"--color"}, {"--cursor", "both", "-n"}} {
		out := s.ok(append([]string{"output"}, args...)...)
		if bidi(out) || !strings.Contains(out, shown) {
			t.Errorf("output %v does not show the bidi controls escaped:\n%q", args, out)
		}
	}
	js := s.ok("output", "--json")
	if bidi(js) {
		t.Errorf("output --json printed raw bidi controls:\n%q", js)
	}
	var ans struct{ Screen string }
	if err := json.Unmarshal([]byte(js), &ans); err != nil || !strings.Contains(ans.Screen, line) {
		t.Errorf("output --json does not decode to the exact text (%v):\n%q", err, ans.Screen)
	}
	// --follow prints screens until the program exits; --lines prints
	// the final screen as lines.
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	modes := [][]string{{"--follow"}, {"--follow", "--lines"}}
	for _, mode := range modes {
		cmd := exec.Command(bin, append([]string{"output", "--socket", s.sock, "--no-color"}, mode...)...)
		out := &strings.Builder{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	s.input("\r") // the program exits, and --follow ends with it
	for i, cmd := range cmds {
		if err := waitCmd(cmd); err != nil {
			t.Fatalf("output %v: %v\n%s", modes[i], err, outs[i].String())
		}
		if got := outs[i].String(); bidi(got) || !strings.Contains(got, shown) {
			t.Errorf("output %v does not show the bidi controls escaped:\n%q", modes[i], got)
		}
	}
}

// TestSecurityRunEscapesBidi: run prints a command's output, and commands
// the command lines, which are the same screen text output escapes: the
// bidi controls in either reach the reader as <U+202E> and the like, and
// commands --json keeps the exact text in \u escapes. Before, both
// printed them as they were.
func TestSecurityRunEscapesBidi(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	// Tag characters spell ASCII no one sees; a line separator splits a
	// line where the screen has none.
	text := "user\u202e x \u2066y\u2069 ok\U000e0069\U000e0067 a\u2028b end"
	shown := "user<U+202E> x <U+2066>y<U+2069> ok<U+E0069><U+E0067> a<U+2028>b end"
	bidi := func(got string) bool { return strings.ContainsFunc(got, termfilter.IsInvisible) }
	r := s.runCmd("printf '%s\\n' '" + text + "'")
	if r.code != 0 || bidi(r.stdout) || r.stdout != shown+"\n" {
		t.Errorf("run does not print the bidi controls escaped: %v", r)
	}
	cmds := s.ok("commands")
	if bidi(cmds) || !strings.Contains(cmds, "printf '%s\\n' '"+shown+"'") {
		t.Errorf("commands does not print the bidi controls escaped:\n%q", cmds)
	}
	js := s.ok("commands", "--json")
	var list wire.CommandsData
	if err := json.Unmarshal([]byte(js), &list); err != nil || bidi(js) || len(list.Commands) == 0 ||
		!strings.Contains(list.Commands[len(list.Commands)-1].Command, text) {
		t.Errorf("commands --json prints raw bidi controls or does not decode to the exact text (%v):\n%q", err, js)
	}
}

// TestAttachDetachResetsModes: every mode the filter lets a program set on
// the user's terminal is off again after a detach, so that the user's
// shell does not get mouse reports, focus events or a frozen screen
// (synchronized output) from a program it left running.
func TestAttachDetachResetsModes(t *testing.T) {
	t.Parallel()
	modes := []int{1, 5, 6, 9, 69, 1000, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 1049, 2004, 2026}
	var set strings.Builder
	for _, m := range modes {
		fmt.Fprintf(&set, "\\033[?%dh", m)
	}
	s := start(t, "--", "sh", "-c", "echo ready; read x; printf '"+set.String()+"\\033[?7l\\033[?25l\\033[5 q'; echo modes-set; read x")
	s.waitText("ready")
	// Set live, not by the repaint, which restores only some of them.
	a := attachPTY(t, 80, 24, "--socket", s.sock)
	a.waitText("ready")
	s.input("\r")
	a.waitText("modes-set")
	a.mu.Lock()
	for _, m := range modes {
		if m == 9 || m == 1000 || m == 1002 {
			// One mouse protocol at a time: 1003, set last,
			// replaced them, so they are looked for in the bytes.
			if !bytes.Contains(a.raw, []byte(fmt.Sprintf("\x1b[?%dh", m))) {
				t.Errorf("the filter did not pass mode %d", m)
			}
			continue
		}
		if !a.scr.PrivateMode(m) {
			t.Errorf("the filter did not pass mode %d", m)
		}
	}
	a.mu.Unlock()
	a.typeKeys("\x1c")
	a.waitExit()
	a.waitText("[detached from")
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range modes {
		if a.scr.PrivateMode(m) {
			t.Errorf("mode %d is still set on the terminal after detach", m)
		}
	}
	if !a.scr.PrivateMode(7) || !a.scr.PrivateMode(25) {
		t.Errorf("wrap (%v) or the cursor (%v) not back on after detach", a.scr.PrivateMode(7), a.scr.PrivateMode(25))
	}
}
