//go:build unix

package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/session/wire"
)

// feedMarks writes p to scr and lets l consume the marks, as the PTY
// reader does.
func feedMarks(scr *screen.Screen, l *commandLog, p string) {
	scr.Write([]byte(p))
	l.update(scr, time.Now())
}

const (
	markA = "\x1b]133;A\a"
	markB = "\x1b]133;B\a"
	markC = "\x1b]133;C\a"
)

func markD(n int) string { return "\x1b]133;D;" + string(rune('0'+n)) + "\a" }

func TestCommandLogFromMarks(t *testing.T) {
	scr := screen.New(20, 5, screen.Options{Scrollback: 100})
	var l commandLog
	if l.atPrompt() {
		t.Fatal("at a prompt before any mark")
	}
	feedMarks(scr, &l, markD(0)+markA+"$ "+markB) // a first prompt: its D ends nothing
	if !l.atPrompt() || len(l.cmds) != 0 {
		t.Fatalf("first prompt: %+v", l)
	}
	feedMarks(scr, &l, "seq 8\r\n"+markC)
	if l.atPrompt() || l.running == nil || l.running.text != "seq 8" {
		t.Fatalf("after C: running %+v", l.running)
	}
	// The output scrolls the command line off a 5-row screen.
	feedMarks(scr, &l, "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n")
	feedMarks(scr, &l, markD(3)+markA+"$ "+markB)
	if !l.atPrompt() || len(l.cmds) != 1 {
		t.Fatalf("after D: %+v", l)
	}
	c := l.cmds[0]
	if c.running || !c.hasStatus || c.status != 3 {
		t.Fatalf("command: %+v", c)
	}
	out, lost := c.output(scr)
	if out != "1\n2\n3\n4\n5\n6\n7\n8\n" || lost != 0 {
		t.Fatalf("output %q, lost %d", out, lost)
	}
	w := c.wire(scr, time.Now())
	if w.OutputLines != 8 || w.From != -4 || w.To != 4 || w.LinesLost != 0 {
		t.Fatalf("wire: %+v", w)
	}

	// A rejected line: no C, only D; it is a command with its message.
	feedMarks(scr, &l, "if then\r\nsyntax error\r\n"+markD(2)+markA+"$ "+markB)
	if len(l.cmds) != 2 || l.cmds[1].text != "if then" || l.cmds[1].status != 2 {
		t.Fatalf("rejected line: %+v", l.cmds[len(l.cmds)-1])
	}
	if out, _ := l.cmds[1].output(scr); out != "syntax error\n" {
		t.Fatalf("rejected line's output %q", out)
	}
	// An empty line is no command.
	feedMarks(scr, &l, "\r\n"+markD(0)+markA+"$ "+markB)
	if len(l.cmds) != 2 {
		t.Fatalf("an empty line made a command: %+v", l.cmds[2])
	}
	// Output without a final newline ends where D was, before the prompt.
	feedMarks(scr, &l, "printf ab\r\n"+markC+"ab"+markD(0)+markA+"$ "+markB)
	if out, _ := l.cmds[2].output(scr); out != "ab" {
		t.Fatalf("partial line: %q", out)
	}
	// Marks from a full-screen program on the alternate screen are not
	// the shell's.
	feedMarks(scr, &l, "vi\r\n"+markC+"\x1b[?1049h"+markA+markB+markD(5)+"\x1b[?1049l")
	if l.running == nil || l.running.text != "vi" {
		t.Fatalf("alternate-screen marks ended the command: %+v", l.running)
	}
}

func TestCommandLogBounded(t *testing.T) {
	scr := screen.New(20, 5, screen.Options{Scrollback: 10})
	var l commandLog
	feedMarks(scr, &l, markA+"$ "+markB)
	for i := 0; i < maxCommands+20; i++ {
		feedMarks(scr, &l, "echo\r\n"+markC+"\r\n"+markD(0)+markA+"$ "+markB)
	}
	if len(l.cmds) != maxCommands || l.cmds[0].id != 21 || l.nextID != maxCommands+20 {
		t.Fatalf("kept %d, oldest %d, next %d", len(l.cmds), l.cmds[0].id, l.nextID)
	}
	// The oldest outputs left the 10-line scrollback: they say so.
	w := l.cmds[0].wire(scr, time.Now())
	if w.LinesLost != 1 || w.OutputLines != 1 {
		t.Fatalf("lost output: %+v", w)
	}
}

// RUN's answer for a program without marks is coded, so that clients
// recognise it with errors.Is; its "error" text is sent exactly as before
// the code existed (interminai's clients read it), the code after it.
func TestNoIntegrationAnswer(t *testing.T) {
	for _, integration := range []bool{false, true} {
		d := &Daemon{cfg: Config{ShellIntegration: integration}}
		rerr := d.noIntegration()
		line := encodeResponse(nil, rerr)
		plain := encodeResponse(nil, wire.RequestError(rerr.Error()))
		want := append(bytes.TrimSuffix(plain, []byte("}\n")), `,"code":"no_shell_integration"}`+"\n"...)
		if !bytes.Equal(line, want) {
			t.Errorf("answer\n%s want\n%s", line, want)
		}
		var r wire.Response
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if err := r.Err(); !errors.Is(err, wire.ErrNoShellIntegration) || err.Error() != rerr.Error() {
			t.Errorf("decoded answer %#v: not ErrNoShellIntegration with the same text", err)
		}
	}
}

// The line RUN typed names the command it starts, whatever the screen
// shows; it is used once, and the next command is the screen's again.
func TestCommandLogTypedText(t *testing.T) {
	scr := screen.New(40, 5, screen.Options{Scrollback: 100})
	var l commandLog
	feedMarks(scr, &l, markA+"$ "+markB)
	l.typed = "echo \u202eok"
	feedMarks(scr, &l, "ececho ok\r\n"+markC+"ok\r\n"+markD(0)+markA+"$ "+markB)
	feedMarks(scr, &l, "true\r\n"+markC+markD(0)+markA+"$ "+markB)
	if len(l.cmds) != 2 || l.cmds[0].text != "echo \u202eok" || l.cmds[1].text != "true" || l.typed != "" {
		t.Fatalf("commands %q, %q; typed left %q", l.cmds[0].text, l.cmds[len(l.cmds)-1].text, l.typed)
	}
}

// A command's output is read back in one pass: the bytes it allocates
// grow with the output, not with its square. (Each line used to copy the
// text before it, so a run of 600,000 lines held the session's lock, and
// with it every request and the PTY reader, for minutes.)
func TestCommandOutputCostIsLinear(t *testing.T) {
	const lines = 20000
	scr := screen.New(40, 5, screen.Options{Scrollback: lines + 10})
	var l commandLog
	feedMarks(scr, &l, markA+"$ "+markB)
	var out bytes.Buffer
	var want strings.Builder
	out.WriteString("seq\r\n" + markC)
	for i := range lines {
		fmt.Fprintf(&out, "line %d  \r\n", i) // trailing blanks, trimmed in the output
		fmt.Fprintf(&want, "line %d\n", i)
	}
	out.WriteString(markD(0) + markA + "$ " + markB)
	feedMarks(scr, &l, out.String())
	if len(l.cmds) != 1 {
		t.Fatalf("commands: %d", len(l.cmds))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, lost := l.cmds[0].output(scr)
	runtime.ReadMemStats(&after)
	if got != want.String() || lost != 0 {
		t.Fatalf("output: %d bytes (want %d), lost %d", len(got), want.Len(), lost)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(64*len(got)) {
		t.Fatalf("reading %d bytes of output allocated %d bytes (%.0fx)", len(got), alloc, float64(alloc)/float64(len(got)))
	}
}
