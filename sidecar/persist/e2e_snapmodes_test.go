//go:build unix

package persist_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// The SNAPSHOT differential: real programs run in a persistent terminal
// with a small journal, driven until the journal has lost their first
// bytes (where most of them set their modes), and stopped (SIGSTOP, so
// that the stream has an end to compare at); then a second host attaches
// from offset 0 and gets a SNAPSHOT. xterm.js headless fed the SNAPSHOT
// must show what xterm.js fed the whole stream up to the snapshot's
// offset shows: the screen's lines, the cursor, and every mode it has:
// the buffer shown, a pending wrap, cursor visibility and style, the modes its API
// reports (cursor keys, keypad, bracketed paste, mouse tracking, origin,
// wrap, focus, insert...), the mouse encoding, the title, the scroll
// region, the character sets, the tab stops and the pen
// (screen/internal/xtermjs/modes.js reads them).

const (
	// snapJournal is small enough that the programs' start-up bytes
	// fall out, large enough to hold a full redraw.
	snapJournal = 32 << 10
	// floodTo is how much output the programs are driven to before the
	// snapshot: enough that the journal lost their first bytes.
	floodTo = 2 * snapJournal
	// floodRound bounds the wait for a flood key's output.
	floodRound = 2 * time.Second
	xtermjsDir = "../../screen/internal/xtermjs"
)

// xtermState is what modes.js reports.
type xtermState struct {
	Lines []string       `json:"lines"`
	Row   int            `json:"row"`
	Col   int            `json:"col"`
	Modes map[string]any `json:"modes"`
	Error string         `json:"error"`
}

// xtermjs is one node process running modes.js, shared by the subtests.
type xtermjs struct {
	mu  sync.Mutex
	in  *json.Encoder
	out *bufio.Scanner
	cmd *exec.Cmd
}

func startXtermJS(t *testing.T) *xtermjs {
	t.Helper()
	need := func(what string, err error) {
		if os.Getenv("PTYPLEX_REQUIRE_XTERMJS") != "" {
			t.Fatalf("%s: %v (make test installs it: the Makefile's xtermjs target)", what, err)
		}
		t.Skipf("%s: %v (run `make xtermjs`)", what, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		need("node", err)
	}
	if _, err := os.Stat(filepath.Join(xtermjsDir, "node_modules", "@xterm", "headless")); err != nil {
		need("@xterm/headless", err)
	}
	cmd := exec.Command(node, "modes.js")
	cmd.Dir = xtermjsDir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	x := &xtermjs{in: json.NewEncoder(in), out: bufio.NewScanner(out), cmd: cmd}
	x.out.Buffer(nil, 64<<20)
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return x
}

func (x *xtermjs) state(t *testing.T, cols, rows int, data []byte) xtermState {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.in.Encode(map[string]any{"cols": cols, "rows": rows, "data": base64.StdEncoding.EncodeToString(data)}); err != nil {
		t.Fatalf("to xterm.js: %v", err)
	}
	if !x.out.Scan() {
		t.Fatalf("xterm.js ended: %v", x.out.Err())
	}
	var st xtermState
	if err := json.Unmarshal(x.out.Bytes(), &st); err != nil || st.Error != "" {
		t.Fatalf("xterm.js: %v %s", err, st.Error)
	}
	for i, l := range st.Lines {
		st.Lines[i] = strings.TrimRight(l, " ")
	}
	return st
}

// snapDriver drives one program through its host.
type snapDriver struct {
	t  *testing.T
	h  *hosttest.Host
	id string
}

func (d *snapDriver) typ(s string) { d.h.Input(d.id, s) }
func (d *snapDriver) mark() int    { return len(d.h.Now().Output(d.id)) }

// after waits for sub in the output from offset mark on.
func (d *snapDriver) after(mark int, sub string) {
	d.t.Helper()
	d.h.MustUntil(fmt.Sprintf("%q after byte %d", sub, mark), func(s hosttest.Snapshot) bool {
		out := s.Output(d.id)
		return len(out) > mark && strings.Contains(out[mark:], sub)
	})
}

// produced waits for n bytes of output.
func (d *snapDriver) produced(n int) {
	d.t.Helper()
	d.h.MustUntil(fmt.Sprintf("%d bytes of output", n), func(s hosttest.Snapshot) bool { return len(s.Output(d.id)) >= n })
}

// flood types keys, one of them a round in turn, until the output
// reaches until bytes, waiting for some output after each round: few
// keys are ever queued, so that a program that skips redraws while keys
// wait still draws, and none is left when the redraw is typed. A key
// that draws nothing (one typed before the program reads the terminal)
// is followed by the next after a while.
func (d *snapDriver) flood(until int, keys ...string) {
	d.t.Helper()
	for i := 0; d.mark() < until; i++ {
		m := d.mark()
		d.typ(keys[i%len(keys)])
		d.h.Until(floodRound, func(s hosttest.Snapshot) bool { return len(s.Output(d.id)) > m })
		if i > 10000 {
			d.t.Fatalf("%d rounds of %q made %d bytes of output", i, keys, d.mark())
		}
	}
}

// redraw types key (the program's redraw) and waits for sub after it.
func (d *snapDriver) redraw(key, sub string) {
	d.t.Helper()
	m := d.mark()
	d.typ(key)
	d.after(m, sub)
}

type snapCase struct {
	name  string
	need  string // the program that must be installed
	cmd   string
	args  []string
	env   map[string]string
	drive func(d *snapDriver)
	// stillMissing, if set, names what the differential still finds
	// different for this program; none is allowed.
}

func writeLines(t *testing.T, path, format string, n int) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format+"\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotModesDifferential(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, filepath.Join(dir, "first.txt"), "line %d of the first file, with some words to fill it", 4000)
	writeLines(t, filepath.Join(dir, "second.txt"), "row %d of the second file", 4000)
	writeLines(t, filepath.Join(dir, "big.txt"), "less line %d, paged through", 100000)
	files := filepath.Join(dir, "many")
	os.Mkdir(files, 0o755)
	for i := range 300 {
		os.WriteFile(filepath.Join(files, fmt.Sprintf("file-%03d.txt", i)), []byte("x\n"), 0o644)
	}
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o755)
	tmuxSock := filepath.Join(dir, "tmux.sock")
	t.Cleanup(func() { exec.Command("tmux", "-S", tmuxSock, "kill-server").Run() })
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		python, _ = exec.LookPath("python3")
	}
	repo, _ := filepath.Abs("../..")
	cases := []snapCase{
		{name: "vim-split", need: "vim", cmd: "vim",
			args: []string{"-u", "NONE", "-N", "-i", "NONE", "-n", "-c", "set mouse=a laststatus=2 ruler", "-o", "first.txt", "second.txt"},
			drive: func(d *snapDriver) {
				d.after(0, "row 1 of the second file")
				d.flood(floodTo, "\x06\x06") // page down the first window
				d.redraw("\x0c", "row 1 of the second file")
			}},
		{name: "less", need: "less", cmd: "less", args: []string{"big.txt"}, env: map[string]string{"LESS": ""},
			drive: func(d *snapDriver) {
				d.after(0, "less line 1,")
				d.flood(floodTo, "     ")
				d.redraw("r", "...skipping...")
			}},
		{name: "htop", need: "htop", cmd: "htop", args: []string{"-d", "1"}, env: map[string]string{"HOME": home},
			drive: func(d *snapDriver) {
				// Its refreshes alone are a few hundred bytes a
				// tenth of a second with few processes to list: a
				// whole redraw (Ctrl-L) each round fills the
				// journal in seconds on any machine.
				d.flood(floodTo, "\x0c")
				d.redraw("\x0c", "\x1b[2J")
			}},
		{name: "mc", need: "mc", cmd: "mc", args: []string{"-u", "many", "many"}, env: map[string]string{"HOME": home},
			drive: func(d *snapDriver) {
				d.after(0, "file-000")
				// End, Home: each a whole panel redrawn.
				d.flood(floodTo, "\x1bOF", "\x1bOH")
				// mc repaints line by line, without clearing: wait for
				// the last line it repaints, the button bar.
				d.redraw("\x0c", "Quit")
			}},
		{name: "tmux-shell", need: "tmux", cmd: "tmux",
			args: []string{"-S", tmuxSock, "-f", "/dev/null", "new-session", "env PS1='tmux$ ' sh"}, env: map[string]string{"TMUX": ""},
			drive: func(d *snapDriver) {
				d.after(0, "tmux$ ")
				for d.mark() < floodTo {
					m := d.mark()
					d.typ("seq 1 300\r")
					d.after(m, "tmux$ ")
				}
				m := d.mark()
				d.typ("seq 1 3000\r")
				d.after(m, "3000")
				d.after(m, "tmux$ ")
				// prefix r: refresh-client, which redraws the status line
				// too (drawn only then and when it changes).
				d.redraw("\x02r", "[0] 0:")
				// What tmux writes after the refresh comes after all of it.
				m = d.mark()
				d.typ("echo done-$((6*7))\r")
				d.after(m, "done-42")
			}},
		{name: "nano", need: "nano", cmd: "nano", args: []string{"-I", "first.txt"}, env: map[string]string{"HOME": home},
			drive: func(d *snapDriver) {
				d.after(0, "GNU nano")
				d.flood(floodTo, "\x16\x16") // ^V: next page
				d.redraw("\x0c", "GNU nano")
			}},
		{name: "man", need: "man", cmd: "man", args: []string{"bash"}, env: map[string]string{"MANPAGER": "less", "PAGER": "less", "LESS": "", "MANWIDTH": "80"},
			drive: func(d *snapDriver) {
				d.after(0, "NAME")
				d.flood(floodTo, "  ")
				d.redraw("r", "...skipping...")
			}},
		{name: "top", need: "top", cmd: "top", args: []string{"-d", "0.2"}, env: map[string]string{"HOME": home},
			drive: func(d *snapDriver) {
				// Colours on or off (z): a whole redraw each round,
				// not only the refreshes, which are small when few
				// processes run.
				d.flood(floodTo, "z")
				d.redraw("zz", "PID USER") // z twice: colours on and off, each a full redraw
			}},
		{name: "python3-repl", need: python, cmd: python, args: []string{"-q"}, env: map[string]string{"PYTHONSTARTUP": ""},
			drive: func(d *snapDriver) {
				d.after(0, ">>> ")
				m := d.mark()
				d.typ("for i in range(12000): print('py', i)\r\r")
				d.after(m, "py 11999")
				d.after(m, "py 11999\r\n>>> ")
			}},
		{name: "git-log-pager", need: "git", cmd: "git", args: []string{"-C", repo, "log", "--stat"}, env: map[string]string{"GIT_PAGER": "less", "LESS": "", "PAGER": "less"},
			drive: func(d *snapDriver) {
				d.after(0, "commit ")
				d.flood(floodTo, "  ")
				d.redraw("r", "...skipping...")
			}},
		{name: "dialog", need: "dialog", cmd: "sh", args: []string{"-c", "seq 1 20000; exec dialog --msgbox 'hello from dialog' 10 40"}, env: map[string]string{"HOME": home},
			drive: func(d *snapDriver) { d.after(0, "hello from dialog") }},
		// A line filled to its last column: the wrap is pending (the
		// next character goes on the next line), and the pen is left
		// bold yellow.
		{name: "pending-wrap", need: "sh", cmd: "sh", args: []string{"-c", `seq 1 20000; printf '\033[1;33m%080d' 0; exec sleep 1000`},
			drive: func(d *snapDriver) { d.after(0, strings.Repeat("0", 80)) }},
		{name: "whiptail", need: "whiptail", cmd: "sh", args: []string{"-c", "seq 1 20000; exec whiptail --yesno 'hello from whiptail' 10 40"},
			drive: func(d *snapDriver) { d.after(0, "hello from whiptail") }},
	}
	x := startXtermJS(t)
	s := newServer(t)
	var lostModes, ran atomic.Int32
	t.Run("programs", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				if _, err := exec.LookPath(c.need); err != nil {
					t.Fatalf("%s is not installed (scripts/test-deps.sh installs it): %v", c.need, err)
				}
				ran.Add(1)
				if snapDifferential(t, s, x, c, dir) {
					lostModes.Add(1)
				}
			})
		}
	})
	// The point of the small journal: for most programs, the bytes that
	// set the modes are gone from it, and only the tracker has them.
	if n := lostModes.Load(); !t.Failed() && int(ran.Load()) == len(cases) && n < 6 {
		t.Fatalf("the journal lost the first mode-setting bytes of only %d programs: the differential does not test what it means to", n)
	}
}

// snapDifferential runs c and compares; it reports whether the journal
// had lost the first DEC private mode sequence the program wrote.
func snapDifferential(t *testing.T, s *server, x *xtermjs, c snapCase, dir string) bool {
	const cols, rows = 80, 24
	id := c.name
	// Hosts of this subtest, so that their waits fail it.
	host := func() *hosttest.Host {
		cmd := exec.Command(sidecarBin, "--persist", s.name)
		cmd.Env = s.env
		return hosttest.StartCmd(t, cmd)
	}
	h := host()
	env := map[string]string{"TERM": "xterm-256color", "LANG": "C.UTF-8"}
	for k, v := range c.env {
		env[k] = v
	}
	h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": id, "cols": cols, "rows": rows, "cmd": c.cmd, "args": c.args,
		"cwd": dir, "env": env, "journal": snapJournal})
	pid := int(h.WaitControl(proto.TypeOpened, id).Fields["pid"].(float64))
	d := &snapDriver{t: t, h: h, id: id}
	c.drive(d)
	// Stop the program (its whole process group) so that the stream
	// has an end: the snapshot is compared at that end.
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-pid, syscall.SIGCONT)
	listUntil(t, h, "the stopped program's output read", func(l proto.Listed) bool {
		e, _ := entry(l, id)
		return e.Produced == uint64(d.mark())
	})
	h2 := host()
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": id, "offset": 0})
	at := h2.WaitControl(proto.TypeAttached, id)
	if lost, _ := at.Fields["lost"].(float64); lost <= 0 {
		t.Fatalf("ATTACH from 0 lost nothing (%s): no SNAPSHOT to test; the program wrote too little", at.Raw)
	}
	sn := h2.WaitControl(proto.TypeSnapshot, id)
	off := uint64(sn.Fields["offset"].(float64))
	data := []byte(sn.Fields["data"].(string))
	// The bytes the first host had not been sent when it was taken
	// over are still in the journal: it attaches again for them.
	if have := uint64(d.mark()); have < off {
		h.SendJSON(proto.TypeAttach, map[string]any{"terminalId": id, "offset": have})
		d.produced(int(off))
	}
	whole := []byte(h.Now().Output(id))[:off]
	l := list(t, h)
	e, _ := entry(l, id)
	first := strings.Index(string(whole), "\x1b[?")
	lostModes := first >= 0 && uint64(first) < e.Start
	t.Logf("%s: %d bytes, journal from %d, snapshot of %d bytes; first mode set at %d: lost from the journal %v", c.name, off, e.Start, len(data), first, lostModes)

	want := x.state(t, cols, rows, whole)
	got := x.state(t, cols, rows, data)
	if !reflect.DeepEqual(want.Lines, got.Lines) {
		for i := range want.Lines {
			if i < len(got.Lines) && want.Lines[i] != got.Lines[i] {
				t.Errorf("line %d:\n  stream   %q\n  snapshot %q", i+1, want.Lines[i], got.Lines[i])
			}
		}
	}
	if want.Row != got.Row || want.Col != got.Col {
		t.Errorf("cursor at %d,%d after the snapshot, %d,%d after the stream", got.Row, got.Col, want.Row, want.Col)
	}
	for k, w := range want.Modes {
		if g := got.Modes[k]; !reflect.DeepEqual(w, g) {
			t.Errorf("mode %s: %v after the snapshot, %v after the stream", k, g, w)
		}
	}
	if t.Failed() {
		t.Logf("stream modes %v", want.Modes)
	}
	return lostModes
}
