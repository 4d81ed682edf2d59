//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestShellColoursAndOutputFlags(t *testing.T) {
	t.Parallel()
	s := shell(t)
	s.input(`printf '\033[32mgreen\033[0m plain\n'` + "\r")
	s.waitText("green plain")
	col := s.ok("output")
	if !strings.Contains(col, "\x1b[32mgreen") {
		t.Errorf("output (colour by default) lacks the SGR: %q", col)
	}
	if c := s.ok("output", "--color"); c != col {
		t.Errorf("--color differs from the default")
	}
	plain := s.ok("output", "--no-color")
	if strings.Contains(plain, "\x1b") || !strings.Contains(plain, "green plain\n") {
		t.Errorf("--no-color: %q", plain)
	}
	lines := strings.Split(plain, "\n")
	if len(lines) != 25 || lines[24] != "" {
		t.Errorf("want 24 newline-terminated lines, got %d", len(lines)-1)
	}

	// --cursor print: 1-based position of the prompt's cursor.
	s.input("\x0c") // clear screen: prompt on line 1
	s.waitFor("cleared screen", func(scr string) bool { return strings.HasPrefix(scr, "$\n") })
	out := s.ok("output", "--no-color", "--cursor", "print")
	if !strings.HasPrefix(out, "Cursor: row 1, col 3\n$\n") {
		t.Errorf("--cursor print: %q", firstLines(out, 3))
	}
	inv := s.ok("output", "--no-color", "--cursor", "inverse")
	if !strings.HasPrefix(inv, "$ \x1b[7m \x1b[27m\n") {
		t.Errorf("--cursor inverse: %q", firstLines(inv, 2))
	}
	both := s.ok("output", "--no-color", "--cursor", "both")
	if !strings.HasPrefix(both, "Cursor: row 1, col 3\n$ \x1b[7m \x1b[27m\n") {
		t.Errorf("--cursor both: %q", firstLines(both, 2))
	}
	num := s.ok("output", "--no-color", "-n")
	if !strings.HasPrefix(num, " 01\t$\n 02\t\n") || !strings.Contains(num, " 24\t\n") {
		t.Errorf("-n: %q", firstLines(num, 3))
	}
	if n2 := s.ok("output", "--no-color", "--number"); n2 != num {
		t.Errorf("--number differs from -n")
	}
	if r := s.run("output", "--cursor", "sideways"); r.code == 0 {
		t.Errorf("--cursor sideways accepted")
	}
}

func TestOutputScrollbackRanges(t *testing.T) {
	t.Parallel()
	s := shell(t)
	s.input("clear; seq 1 60\r")
	s.waitText("\n60\n")
	// 24 rows: "$ clear; seq 1 60" scrolled away with 1..37; screen shows
	// 38..60 and the prompt.
	all := s.ok("output", "--no-color", "--from", "-", "-n")
	if !strings.Contains(all, " 01\t38\n") || !strings.Contains(all, "-01\t37\n") {
		t.Errorf("--from - -n:\n%s", all)
	}
	sb := s.ok("output", "--no-color", "--from", "-", "--to", "0")
	if strings.Contains(sb, "38\n") || !strings.HasSuffix(sb, "36\n37\n") {
		t.Errorf("--to 0 (scrollback only):\n%s", sb)
	}
	last5 := s.ok("output", "--no-color", "--from", "-5", "--to", "-1")
	if last5 != "33\n34\n35\n36\n37\n" {
		t.Errorf("--from -5 --to -1: %q", last5)
	}
	mid := s.ok("output", "--no-color", "--from", "-2", "--to", "2", "-n")
	if mid != "-2\t36\n-1\t37\n 1\t38\n 2\t39\n" {
		t.Errorf("--from -2 --to 2 -n: %q", mid)
	}
	if st := s.ok("status"); !strings.Contains(st, "Scrollback: ") || strings.Contains(st, "Scrollback: 0/") {
		t.Errorf("status scrollback: %s", st)
	}
}

func TestInputTextEscapesAndStdin(t *testing.T) {
	t.Parallel()
	s := shell(t)
	// \x41 is A; \z is not an escape and must reach bash as backslash-z.
	s.input(`echo \x41-'\z'-done\r`)
	s.waitText(`A-\z-done`)
	r := ptyplex(t, "echo from-stdin\r", "input", "--socket", s.sock)
	if r.code != 0 {
		t.Fatal(r)
	}
	s.waitText("\nfrom-stdin\n")
	// --text wins over stdin.
	r = ptyplex(t, "echo LOST\r", "input", "--socket", s.sock, "--text", `echo text-wins\r`)
	if r.code != 0 {
		t.Fatal(r)
	}
	scr := s.waitText("\ntext-wins\n")
	if strings.Contains(scr, "LOST") {
		t.Errorf("stdin was sent although --text was given:\n%s", scr)
	}
}

func TestPythonREPL(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	s := start(t, "--", "python3", "-q")
	s.waitText(">>>")
	s.input("print(6*7)\r")
	s.waitText("\n42\n")
	s.input("exit()\r")
	if got := strings.TrimSpace(s.ok("wait", "--quiet")); got != "0" {
		t.Errorf("python exit code %q", got)
	}
}

func TestVimEditAndSave(t *testing.T) {
	t.Parallel()
	requireTool(t, "vim")
	file := filepath.Join(t.TempDir(), "notes.txt")
	s := start(t, "--", "vim", "-u", "NONE", "-N", "-n", "-i", "NONE", file)
	s.waitText("notes.txt")
	s.input("ihello from ptyplex\x1b")
	s.waitFor("insert mode left", func(scr string) bool {
		return strings.Contains(scr, "hello from ptyplex") && !strings.Contains(scr, "-- INSERT --")
	})
	s.input(":wq\r")
	if got := strings.TrimSpace(s.ok("wait", "--quiet")); got != "0" {
		t.Errorf("vim exit code %q", got)
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != "hello from ptyplex\n" {
		t.Errorf("file after :wq: %q, %v", b, err)
	}
}

func TestLessPaging(t *testing.T) {
	t.Parallel()
	requireTool(t, "less")
	file := filepath.Join(t.TempDir(), "lines.txt")
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	os.WriteFile(file, []byte(b.String()), 0o644)
	s := start(t, "--", "env", "LESS=", "LESSHISTFILE=-", "less", file)
	s.waitText("line 001")
	s.input("G")
	s.waitText("line 200")
	s.input("g")
	s.waitFor("back at the top", func(scr string) bool { return strings.HasPrefix(scr, "line 001") })
	s.input("q")
	if got := strings.TrimSpace(s.ok("wait", "--quiet")); got != "0" {
		t.Errorf("less exit code %q", got)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", "echo bye; exit 3")
	if got := strings.TrimSpace(s.ok("wait", "--quiet")); got != "3" {
		t.Errorf("wait --quiet: %q, want 3", got)
	}
	st := s.ok("status")
	if !strings.Contains(st, "Running: false\n") || !strings.Contains(st, "Exit code: 3\n") {
		t.Errorf("status after exit:\n%s", st)
	}
	// The screen stays readable after the exit, until stop.
	if !strings.Contains(s.screen(), "bye") {
		t.Errorf("screen lost after exit")
	}
	r := s.run("status", "--quiet")
	if r.code != 1 || strings.TrimSpace(r.stdout) != "3" {
		t.Errorf("status --quiet after exit: %v", r)
	}
	r = s.run("input", "--text", "x")
	if r.code != 1 || !strings.Contains(r.stderr, "Error: Process not running") {
		t.Errorf("input after exit: %v", r)
	}
	r = s.run("kill")
	if r.code != 1 || !strings.Contains(r.stderr, "Error: Process already dead") {
		t.Errorf("kill after exit: %v", r)
	}
	w := s.ok("wait")
	// The two lines of the spec and nothing else (the code is status's).
	if w != "Terminal activity: false\nApplication exited: true\n" && w != "Terminal activity: true\nApplication exited: true\n" {
		t.Errorf("wait after exit: %q", w)
	}

	k := start(t, "--", "sleep", "1000")
	if r := k.run("status", "--quiet"); r.code != 0 || r.stdout != "" {
		t.Errorf("status --quiet while running: %v", r)
	}
	if out := k.ok("kill", "--signal", "KILL"); out != "" { // silent, as interminai's
		t.Errorf("kill output %q", out)
	}
	if got := strings.TrimSpace(k.ok("wait", "--quiet")); got != "137" {
		t.Errorf("exit code after SIGKILL: %q, want 137", got)
	}
}

func TestKillSignalNamesAndNumbers(t *testing.T) {
	t.Parallel()
	script := `trap 'echo got-USR1' USR1; trap 'echo got-USR2' USR2; trap 'echo got-INT' INT; trap 'echo got-HUP' HUP
echo ready; sleep 1000 & while :; do wait $!; done`
	s := start(t, "--", "bash", "--norc", "--noprofile", "-c", script)
	s.waitText("ready")
	// Each form reaches the program as the signal it names (the trap says
	// which one arrived).
	for _, tc := range []struct{ sig, echo string }{
		{"SIGUSR1", "got-USR1"},
		{"usr2", "got-USR2"},
		{"2", "got-INT"},
		{"HUP", "got-HUP"},
		{"10", "got-USR1"},
	} {
		n := strings.Count(s.screen(), tc.echo)
		if out := s.ok("kill", "--signal", tc.sig); out != "" {
			t.Errorf("kill --signal %s printed %q", tc.sig, out)
		}
		s.waitFor(tc.echo, func(scr string) bool { return strings.Count(scr, tc.echo) > n })
	}
	for _, bad := range []string{"NOTASIGNAL", "9999", "0", ""} {
		r := s.run("kill", "--signal", bad)
		if r.code != 1 || !strings.Contains(r.stderr, "Invalid signal") {
			t.Errorf("kill --signal %q: %v", bad, r)
		}
	}
	s.ok("kill") // default SIGTERM
	if got := strings.TrimSpace(s.ok("wait", "--quiet")); got != "143" {
		t.Errorf("exit after SIGTERM: %q, want 143", got)
	}
}

func TestStopEscalatesPastIgnoredTERM(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "bash", "--norc", "--noprofile", "-c", "trap '' TERM HUP; echo ready; while :; do read -r x; done")
	s.waitText("ready")
	s.ok("kill", "--signal", "TERM")
	if st := s.ok("status"); !strings.Contains(st, "Running: true") {
		t.Fatalf("TERM-ignoring child died of SIGTERM:\n%s", st)
	}
	// The child's pid: the daemon's only child.
	child := childOf(t, s.pid)
	s.ok("stop")
	if !waitGone(child, deadline) {
		t.Errorf("child %d survived stop", child)
	}
}

func TestStopKillsBackgroundJobs(t *testing.T) {
	t.Parallel()
	s := shell(t)
	s.input("sleep 4321 & echo bgpid=$!\r")
	scr := s.waitFor("background pid", func(scr string) bool { return regexp.MustCompile(`bgpid=\d+`).MatchString(scr) })
	var bg int
	fmt.Sscanf(regexp.MustCompile(`bgpid=(\d+)`).FindStringSubmatch(scr)[1], "%d", &bg)
	s.ok("stop")
	if !waitGone(bg, deadline) {
		t.Errorf("background job %d survived stop", bg)
	}
}

func TestResize(t *testing.T) {
	t.Parallel()
	s := shell(t)
	if out := s.ok("resize", "--size", "100x30"); out != "Terminal resized to 100x30\n" {
		t.Errorf("resize printed %q", out)
	}
	s.input("stty size\r")
	s.waitText("30 100")
	if st := s.ok("status"); !strings.Contains(st, "Size: 100x30\n") {
		t.Errorf("status after resize:\n%s", st)
	}
	lines := strings.Count(s.screen(), "\n")
	if lines != 30 {
		t.Errorf("screen has %d lines after resize, want 30", lines)
	}
	for _, bad := range []string{"100", "ax30", "0x0", ""} {
		if r := s.run("resize", "--size", bad); r.code == 0 {
			t.Errorf("resize --size %q accepted", bad)
		}
	}
}

// TestResizeAfterExit: after the program exited, resize still resizes
// the final screen and says so, as interminai's does.
func TestResizeAfterExit(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "80x24", "--", "sh", "-c", "echo finished")
	if r := s.run("wait", "--timeout", deadline.String()); r.code != 0 {
		t.Fatalf("wait (for the exit): %v", r)
	}
	if out := s.ok("resize", "--size", "100x30"); out != "Terminal resized to 100x30\n" {
		t.Errorf("resize after the exit: %q", out)
	}
	if st := s.ok("status"); !strings.Contains(st, "Size: 100x30\n") {
		t.Errorf("status after a resize after the exit:\n%s", st)
	}
	if scr := s.screen(); !strings.Contains(scr, "finished") || strings.Count(scr, "\n") != 30 {
		t.Errorf("the final screen after the resize:\n%s", scr)
	}
}

func TestDebugUnhandledAndTermios(t *testing.T) {
	t.Parallel()
	s := start(t, "--debug-buffer", "2", "--", "sh", "-c",
		`printf '\033[5y\033[999z\033#9\033[998z mark\n'; exec cat`)
	s.waitText("mark")
	d := s.ok("debug")
	want := "Unhandled escape sequences:\n  \\e#9 (1b2339)\n  \\e[998z (1b5b3939387a)\nDropped: 2 (buffer overflow)\nTermios:\n  Mode: cooked\n"
	if !strings.HasPrefix(d, want) {
		t.Errorf("debug:\n%s\nwant prefix:\n%s", d, want)
	}
	for _, part := range []string{"  Flags: ECHO ", "ICRNL", "  Hex: iflag=0x", " oflag=0x", " lflag=0x", " cflag=0x",
		"  c_cc: VINTR=^C VEOF=^D VERASE=^? VKILL=^U VSUSP=^Z VQUIT=^\\\n"} {
		if !strings.Contains(d, part) {
			t.Errorf("debug lacks %q:\n%s", part, d)
		}
	}
	if c := s.ok("debug", "--clear"); c != d {
		t.Errorf("debug --clear printed something else than debug:\n%s", c)
	}
	if d2 := s.ok("debug"); !strings.HasPrefix(d2, "No unhandled escape sequences\nTermios:\n") {
		t.Errorf("debug after --clear:\n%s", d2)
	}
}

// start --debug-buffer 0 keeps no unhandled sequence, as --scrollback 0
// keeps no line, and counts them as dropped; it used to keep the default
// 10, the emulator's meaning of 0.
func TestDebugBufferZeroKeepsNone(t *testing.T) {
	t.Parallel()
	s := start(t, "--debug-buffer", "0", "--", "sh", "-c",
		`printf '\033[5y\033[999z\033#9 mark\n'; exec cat`)
	s.waitText("mark")
	want := "No unhandled escape sequences\nDropped: 3 (buffer overflow)\nTermios:\n"
	if d := s.ok("debug", "--clear"); !strings.HasPrefix(d, want) {
		t.Errorf("debug with --debug-buffer 0:\n%s\nwant prefix:\n%s", d, want)
	}
	if d := s.ok("debug"); !strings.HasPrefix(d, "No unhandled escape sequences\nTermios:\n") {
		t.Errorf("debug after --clear:\n%s", d)
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// childOf returns the single child of pid.
func childOf(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var kids []int
	if err == nil {
		for _, f := range strings.Fields(string(b)) {
			var k int
			fmt.Sscanf(f, "%d", &k)
			kids = append(kids, k)
		}
	}
	if len(kids) == 0 {
		// Go daemons have many threads; the child may hang off another task.
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, tk := range tasks {
			b, _ := os.ReadFile(tk)
			for _, f := range strings.Fields(string(b)) {
				var k int
				fmt.Sscanf(f, "%d", &k)
				kids = append(kids, k)
			}
		}
	}
	if len(kids) != 1 {
		t.Fatalf("daemon %d has children %v, want exactly one", pid, kids)
	}
	return kids[0]
}

// TestInputStdinBytesExact: the bytes piped into `input` reach the program
// unchanged, invalid UTF-8 included (a lone \xff, a sequence cut short, an
// encoded surrogate), not re-encoded as the characters U+00HH.
func TestInputStdinBytesExact(t *testing.T) {
	t.Parallel()
	const payload = "bad\xff\xfe\xc3(\xed\xa0\x80utf8\n"
	got := filepath.Join(t.TempDir(), "got")
	// Raw mode: no line discipline between the PTY and head.
	s := start(t, "--", "sh", "-c", fmt.Sprintf("stty raw -echo; echo ready; head -c %d > %s; echo done", len(payload), got))
	s.waitText("ready")
	if r := ptyplex(t, payload, "input", "--socket", s.sock); r.code != 0 {
		t.Fatal(r)
	}
	s.waitText("done")
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != payload {
		t.Errorf("the program read % x\nwant                 % x", b, payload)
	}
}

// TestInputKeysTextOrder: --text and the key names of --keys are typed in
// the order of the command line, not text first whatever the order.
func TestInputKeysTextOrder(t *testing.T) {
	t.Parallel()
	got := filepath.Join(t.TempDir(), "got")
	const want = "\x1bA:wq\rB"
	s := start(t, "--", "sh", "-c", fmt.Sprintf("stty raw -echo; echo ready; head -c %d > %s; echo done", len(want), got))
	s.waitText("ready")
	s.ok("input", "--keys", "Escape", "--text", "A:wq", "Enter", "--cursor-keys", "normal")
	s.ok("input", "--text", "B")
	s.waitText("done")
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("the program read %q, want %q", b, want)
	}
}

// TestInputRepeatedText: every --text is typed, in its place among the key
// names (before, a later --text replaced the first one, which was lost).
func TestInputRepeatedText(t *testing.T) {
	t.Parallel()
	got := filepath.Join(t.TempDir(), "got")
	const want = "ihi\x1b:wq\rAB"
	s := start(t, "--", "sh", "-c", fmt.Sprintf("stty raw -echo; echo ready; head -c %d > %s; echo done", len(want), got))
	s.waitText("ready")
	s.ok("input", "--text", "ihi", "--keys", "Escape", "--text", ":wq", "Enter", "--cursor-keys", "normal")
	s.ok("input", "--text", "A", "--text", "B")
	s.waitText("done")
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("the program read %q, want %q", b, want)
	}
}
