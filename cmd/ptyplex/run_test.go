//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// integratedShell starts shell (bash or zsh) with --shell-integration and
// a HOME of its own, whose rc file sets a plain prompt, a variable that
// shows it ran, and a prompt command of its own (bash: ending in ';', as
// many do), so that the tests see the user's file run before the marks.
func integratedShell(t *testing.T, shell string, extra ...string) *sess {
	t.Helper()
	requireTool(t, shell)
	home := t.TempDir()
	rc := map[string]string{
		"bash": ".bashrc",
		"zsh":  ".zshrc",
	}[shell]
	body := "PS1='$ '\nFROM_USER_RC=yes\nHISTFILE=/dev/null\n"
	if shell == "bash" {
		body += "PROMPT_COMMAND='USER_PC=$?;'\n"
	}
	if err := os.WriteFile(filepath.Join(home, rc), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// The daemon and the shell get a HOME of the test's own, which keeps
	// the machine's rc files out of it, and no ZDOTDIR.
	env := []string{"HOME=" + home}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "ZDOTDIR=") {
			env = append(env, kv)
		}
	}
	s := startEnv(t, env, append(extra, "--shell-integration", "--", shell)...)
	s.waitText("$")
	return s
}

// runCmd is `ptyplex run` in s.
func (s *sess) runCmd(command string, extra ...string) result {
	s.t.Helper()
	return s.run(append(append([]string{"run"}, extra...), "--", command)...)
}

func wantRun(t *testing.T, r result, code int, output string) {
	t.Helper()
	if r.code != code || r.stdout != output {
		t.Fatalf("want exit %d and output %q; got %v", code, output, r)
	}
}

func TestRunExitCodesAndOutputBash(t *testing.T) { testRunExitCodes(t, "bash") }
func TestRunExitCodesAndOutputZsh(t *testing.T)  { testRunExitCodes(t, "zsh") }

func testRunExitCodes(t *testing.T, shell string) {
	t.Parallel()
	begin := time.Now().UnixMilli()
	s := integratedShell(t, shell)
	wantRun(t, s.runCmd("true"), 0, "")
	wantRun(t, s.runCmd("false"), 1, "")
	wantRun(t, s.runCmd("(exit 3)"), 3, "")
	wantRun(t, s.runCmd("echo $FROM_USER_RC"), 0, "yes\n")
	if shell == "bash" {
		// The user's own prompt command still runs, and sees the status
		// of the command before it (false's 1), not the marks' own.
		wantRun(t, s.runCmd("false"), 1, "")
		wantRun(t, s.runCmd("echo $USER_PC"), 0, "1\n")
	}
	wantRun(t, s.runCmd("printf 'a\\tb\\nno newline'"), 0, "a       b\nno newline")
	// Variables and the directory carry over: it is one shell.
	wantRun(t, s.runCmd("X=42; cd /"), 0, "")
	wantRun(t, s.runCmd("echo $X $PWD"), 0, "42 /\n")

	// 500 lines on a 24-row screen: most come from the scrollback.
	var want strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	wantRun(t, s.runCmd("seq 500"), 0, want.String())
	// A line longer than the screen is wide comes back as one line.
	long := strings.Repeat("x", 200)
	wantRun(t, s.runCmd("echo "+long), 0, long+"\n")

	var list wire.CommandsData
	if err := json.Unmarshal([]byte(s.ok("commands", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if shell == "bash" {
		list.Commands = append(list.Commands[:4], list.Commands[6:]...) // the prompt command's two
	}
	if !list.Integration || !list.AtPrompt || len(list.Commands) != 9 {
		t.Fatalf("commands: want 9, integration and at the prompt; got %+v", list)
	}
	seq := list.Commands[7]
	if seq.Command != "seq 500" || seq.ExitCode == nil || *seq.ExitCode != 0 || seq.OutputLines != 500 || seq.From >= 0 || seq.Running {
		t.Fatalf("the seq command: %+v", seq)
	}
	// Its line range is OUTPUT's: reading it returns the same lines.
	got := s.ok("output", "--no-color", "--from", fmt.Sprint(seq.From), "--to", fmt.Sprint(seq.To))
	if !strings.HasPrefix(got, "1\n2\n3\n") || !strings.Contains(got, "500") {
		t.Fatalf("output --from %d --to %d:\n%.200s", seq.From, seq.To, got)
	}
	if c := list.Commands[2]; c.Command != "(exit 3)" || c.ExitCode == nil || *c.ExitCode != 3 {
		t.Fatalf("the third command: %+v", c)
	}

	// Times: each command starts after the one before ended, ends after
	// it starts, within the test's wall clock, and lasts end - start.
	typed := time.Now().UnixMilli()
	wantRun(t, s.runCmd("sleep 0.3"), 0, "")
	end := time.Now().UnixMilli()
	if err := json.Unmarshal([]byte(s.ok("commands", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	prev := begin
	for _, c := range list.Commands {
		if c.Running || c.Started < prev || c.Ended < c.Started || c.Ended > end || c.DurationMS < c.Ended-c.Started-1 || c.DurationMS > c.Ended-c.Started+1 {
			t.Fatalf("times of %q (test ran %d..%d, the command before ended at %d): %+v", c.Command, begin, end, prev, c)
		}
		prev = c.Ended
	}
	// The marks are timed as the daemon reads them, so the duration
	// may be a little shorter than the command ran (its start read late)
	// or longer; what holds whatever the load is that the end was seen
	// after the sleep ended, at least 300 ms after it was typed.
	if c := list.Commands[len(list.Commands)-1]; c.Command != "sleep 0.3" || c.Started < typed || c.Ended < typed+300 || c.DurationMS <= 0 {
		t.Fatalf("sleep 0.3, typed at %d, lasted %d ms: %+v", typed, c.DurationMS, c)
	}
}

// A command that outlives --timeout is left running; exit 124 says so,
// and the next run waits for it before typing.
func TestRunTimeoutLeavesCommandRunning(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	fifo := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(fifo, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The command waits for a file to change, so the test decides when
	// it ends instead of guessing a duration.
	cmd := fmt.Sprintf("echo started; while [ ! -s %s ]; do sleep 0.05; done; echo finished; (exit 7)", fifo)
	r := s.runCmd(cmd, "--timeout", "2s")
	if r.code != exitTimeout || r.stdout != "started\n" || !strings.Contains(r.stderr, "still running") {
		t.Fatalf("want exit 124, the output so far and a note; got %v", r)
	}
	var list wire.CommandsData
	json.Unmarshal([]byte(s.ok("commands", "--json")), &list)
	if n := len(list.Commands); n != 1 || !list.Commands[0].Running || list.AtPrompt {
		t.Fatalf("commands: want the one command running; got %+v", list)
	}
	// A second run times out too, without typing: the shell is busy.
	r = s.runCmd("echo never", "--timeout", "200ms")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "earlier command is still running") {
		t.Fatalf("run while busy: %v", r)
	}
	// Now let it end; a run started before that waits for it, then runs.
	done := make(chan result, 1)
	go func() { done <- ptyplex(t, "", "run", "--socket", s.sock, "--", "echo next") }()
	if err := os.WriteFile(fifo, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantRun(t, <-done, 0, "next\n")
	json.Unmarshal([]byte(s.ok("commands", "--json")), &list)
	if n := len(list.Commands); n != 2 {
		t.Fatalf("commands: %+v", list)
	}
	if c := list.Commands[0]; c.Running || c.ExitCode == nil || *c.ExitCode != 7 {
		t.Fatalf("the long command after it ended: %+v", c)
	}
	if strings.Contains(s.screen(), "never") {
		t.Fatalf("the refused command was typed:\n%s", s.screen())
	}
}

func TestRunWithoutShellIntegration(t *testing.T) {
	t.Parallel()
	s := shell(t)
	r := s.runCmd("echo hi")
	if r.code != exitFail || !strings.Contains(r.stderr, "--shell-integration") {
		t.Fatalf("want exit 1 and an error naming --shell-integration; got %v", r)
	}
	if strings.Contains(s.screen(), "echo hi") {
		t.Fatalf("the command was typed into a shell without integration:\n%s", s.screen())
	}
}

func TestRunBadInput(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	r := s.run("run", "--", "echo a\necho b")
	if r.code != exitFail || !strings.Contains(r.stderr, "one line") {
		t.Fatalf("a two-line command: %v", r)
	}
	r = s.run("run")
	if r.code != exitUsage {
		t.Fatalf("no command: %v", r)
	}
	// The session is unharmed.
	wantRun(t, s.runCmd("echo ok"), 0, "ok\n")
}

func TestStartShellIntegrationOtherShells(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{{"sh"}, {"python3"}, {"bash", "--norc"}, {"bash", "-c", "true"}} {
		r := ptyplex(t, "", append([]string{"start", "--shell-integration", "--"}, argv...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--shell-integration") {
			t.Fatalf("start --shell-integration -- %v: want a usage error; got %v", argv, r)
		}
		if argv[0] == "sh" && !strings.Contains(r.stderr, "bash and zsh") {
			t.Fatalf("the error should name the supported shells: %v", r)
		}
	}
}

// A line the shell rejects (a syntax error) still ends the run, with the
// shell's status and its message.
func TestRunSyntaxError(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	r := s.runCmd("if then")
	if r.code != 2 || !strings.Contains(r.stdout, "syntax error") {
		t.Fatalf("a syntax error: %v", r)
	}
	wantRun(t, s.runCmd("echo fine"), 0, "fine\n")
}

// Two runs at once take turns: each gets its own command's output.
func TestRunConcurrent(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	const n = 4
	done := make(chan result, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			done <- ptyplex(t, "", "run", "--socket", s.sock, "--", fmt.Sprintf("echo run-%d; (exit %d)", i, i))
		}(i)
	}
	seen := map[int]bool{}
	for i := 0; i < n; i++ {
		r := <-done
		var k int
		if _, err := fmt.Sscanf(r.stdout, "run-%d\n", &k); err != nil || r.stdout != fmt.Sprintf("run-%d\n", k) || r.code != k || seen[k] {
			t.Fatalf("a concurrent run: %v", r)
		}
		seen[k] = true
	}
}

// TestRunSaysLinesLost: output longer than the scrollback loses its first
// lines, and stdout itself says so at the place they are missing.
func TestRunSaysLinesLost(t *testing.T) {
	s := integratedShell(t, "bash", "--scrollback", "50", "--size", "80x10")
	r := s.runCmd("seq 1 200")
	if r.code != 0 {
		t.Fatal(r)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "@@ ptyplex run: the first ") || !strings.Contains(lines[0], "lines of the output had already left the scrollback") {
		t.Fatalf("stdout does not say that lines were lost:\n%s", r.stdout)
	}
	if lines[len(lines)-1] != "200" {
		t.Errorf("the output does not end with the last line: %q", lines[len(lines)-1])
	}
}

// TestRunKeepLines: --keep-lines grows the scrollback first, so output
// longer than the session's scrollback comes back whole, with no note.
func TestRunKeepLines(t *testing.T) {
	s := integratedShell(t, "bash", "--scrollback", "50", "--size", "80x10")
	var want strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	wantRun(t, s.runCmd("seq 1 300", "--keep-lines", "400"), 0, want.String())
	for _, bad := range []string{"0", "-1", "1000001"} {
		if r := s.runCmd("true", "--keep-lines", bad); r.code != exitUsage || !strings.Contains(r.stderr, "--keep-lines") {
			t.Errorf("--keep-lines %s: %v", bad, r)
		}
	}
}

// A command that ends the shell ends with it: commands shows it ended,
// with the shell's exit code, not running on forever.
func TestCommandsEndWithTheShell(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	if r := s.runCmd("echo x; exit 7"); r.code != 7 || !strings.HasPrefix(r.stdout, "x\n") { // bash adds "exit"
		t.Fatalf("run: %v", r)
	}
	if r := s.run("wait", "--quiet", "--timeout", deadline.String()); r.code != 0 || strings.TrimSpace(r.stdout) != "7" {
		t.Fatalf("wait --quiet: %v", r)
	}
	var list wire.CommandsData
	if err := json.Unmarshal([]byte(s.ok("commands", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Commands) != 1 {
		t.Fatalf("commands: %+v", list)
	}
	c := list.Commands[0]
	if c.Running || !c.ShellExited || c.ExitCode == nil || *c.ExitCode != 7 || c.Ended < c.Started || c.Command != "echo x; exit 7" {
		t.Fatalf("the command that exited the shell: %+v", c)
	}
	table := s.ok("commands")
	if f := strings.Fields(table); len(f) < 4 || f[0] != "1" || f[1] != "7" {
		t.Fatalf("commands table:\n%s", table)
	}
	// A later run types nothing: it must not report the old shell's
	// status as its command's.
	if r := s.runCmd("echo again"); r.code != exitFail || r.stdout != "" || !strings.Contains(r.stderr, "Process not running: the shell exited (status 7)") {
		t.Fatalf("run after the shell exited: want exit 1, no output and the reason; got %v", r)
	}
}

// commands' LINES column: "-" while a running command has printed
// nothing (not the empty cursor row), its lines once it has, and
// "-(N-lost)" for output the scrollback no longer holds at all.
func TestCommandsLinesColumn(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash", "--size", "40x6", "--scrollback", "3")
	wantRun(t, s.runCmd("seq 3"), 0, "1\n2\n3\n")
	flag := filepath.Join(t.TempDir(), "go")
	cmd := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo late", flag)
	if r := s.runCmd(cmd, "--timeout", "100ms"); r.code != exitTimeout {
		t.Fatalf("run: %v", r)
	}
	columns := func() [][]string {
		var rows [][]string
		for _, line := range strings.Split(strings.TrimSpace(s.ok("commands")), "\n") {
			rows = append(rows, strings.Fields(line))
		}
		return rows
	}
	rows := columns()
	for end := time.Now().Add(deadline); len(rows) < 2 && time.Now().Before(end); rows = columns() {
		s.run("wait", "--timeout", time.Until(end).String()) // the shell's C mark is output
	}
	if len(rows) != 2 || rows[1][1] != "running" || rows[1][3] != "-" {
		t.Fatalf("a running command without output: %q, want LINES -", rows)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := s.runCmd("seq 20"); r.code != 0 || !strings.HasSuffix(r.stdout, "19\n20\n") {
		t.Fatalf("run: %v", r)
	}
	rows = columns()
	if len(rows) != 3 || rows[0][3] != "-(3-lost)" || rows[2][3] != "-3..5(12-lost)" {
		t.Fatalf("commands after the scrollback lost seq 3's lines: %q", rows)
	}
}

// commands on a program without shell integration exits 1 with its
// message, as run does, the --json answer printed all the same.
func TestCommandsWithoutShellIntegration(t *testing.T) {
	t.Parallel()
	s := shell(t)
	r := s.run("commands")
	if r.code != exitFail || r.stdout != "" || !strings.Contains(r.stderr, "--shell-integration") {
		t.Fatalf("commands: want exit 1 and a message naming --shell-integration; got %v", r)
	}
	r = s.run("commands", "--json")
	var list wire.CommandsData
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != exitFail || list.Integration || !strings.Contains(r.stderr, "--shell-integration") {
		t.Fatalf("commands --json: want the answer, exit 1 and the message; got %v (%v)", r, err)
	}
}

// The command line commands shows for a command run typed is the text run
// sent, not the screen's rendering of it, which the line editor can garble
// (bash, after a 14-column prompt, redraws a line with bidi controls in it
// as "ececho ...").
func TestCommandsTextIsWhatRunTyped(t *testing.T) {
	t.Parallel()
	requireTool(t, "bash")
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("PS1='root@vm:/tmp# '\nHISTFILE=/dev/null\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "LANG=C.UTF-8", "LC_ALL="}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "ZDOTDIR" && k != "LANG" && k != "LC_ALL" {
			env = append(env, kv)
		}
	}
	s := startEnv(t, env, "--shell-integration", "--", "bash")
	s.waitText("/tmp#")
	const line = "echo A\u202eB # \u2067"
	if r := s.runCmd(line); r.code != 0 || r.stdout != "A<U+202E>B\n" {
		t.Fatalf("run: %v", r)
	}
	var list wire.CommandsData
	if err := json.Unmarshal([]byte(s.ok("commands", "--json", "--last", "1")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Commands) != 1 || list.Commands[0].Command != line {
		t.Fatalf("commands --json: want the command %q; got %+v", line, list)
	}
	if got, want := s.ok("commands", "--last", "1"), " echo A<U+202E>B # <U+2067>\n"; !strings.HasSuffix(got, want) {
		t.Fatalf("commands: %q, want it to end in %q", got, want)
	}
}

// A run whose timeout passes while an earlier command still runs typed
// nothing: the earlier command's output is not printed as its own, and
// the answer says which command still runs.
func TestRunPromptTimeoutPrintsNothing(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	flag := filepath.Join(t.TempDir(), "go")
	first := fmt.Sprintf("echo EARLIER-$((40+2)); while [ ! -e %s ]; do sleep 0.05; done", flag)
	if r := s.runCmd(first, "--timeout", "100ms"); r.code != exitTimeout {
		t.Fatalf("run: %v", r)
	}
	s.waitText("EARLIER-42")
	r := s.runCmd("echo next", "--timeout", "200ms")
	if r.code != exitTimeout || r.stdout != "" || !strings.Contains(r.stderr, "was not typed") {
		t.Fatalf("run behind a running command: want exit 124, no output and the note; got %v", r)
	}
	ans := rawCall(t, s.sock, `{"type":"RUN","command":"echo next","timeout_ms":200}`)
	data, _ := ans["data"].(map[string]any)
	if data["waiting_for"] != "prompt" || data["running"] != true || data["id"] != float64(1) || data["output"] != "" || data["timed_out"] != true {
		t.Fatalf("RUN timed out at the prompt: want running, the running command's id 1 and no output; got %v", ans)
	}
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wantRun(t, s.runCmd("echo next"), 0, "next\n")
}

// Output whose wide characters wrapped at the right margin comes back as
// printed: the column a wide character did not fit is the terminal's
// blank, not a space; a space the program printed there stays.
func TestRunWideCharactersWrapped(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash", "--size", "80x24")
	wantRun(t, s.runCmd(`printf a; for i in $(seq 100); do printf '\xe7\x95\x8c'; done; echo`), 0, "a"+strings.Repeat("界", 100)+"\n")
	wantRun(t, s.runCmd(`printf '%079d \xe7\x95\x8c\n' 0`), 0, strings.Repeat("0", 79)+" 界\n")
}

// Lines a command erased with the scrollback (clear) are reported as
// erased, without advice to keep them with --keep-lines, which cannot.
func TestRunOutputClearedLines(t *testing.T) {
	t.Parallel()
	s := integratedShell(t, "bash")
	r := s.runCmd(`seq 3; printf '\033[H\033[2J\033[3J'; echo x`, "--keep-lines", "1000")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "x\n") || !strings.Contains(r.stdout, "were erased") || strings.Contains(r.stdout+r.stderr, "keep-lines") {
		t.Fatalf("run of a command that cleared the scrollback: %v", r)
	}
}
