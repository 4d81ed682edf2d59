package ptyhost

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The tests run real programs on real pseudo-consoles: cmd.exe, and this
// test binary in a helper role chosen by helperEnv. Under Wine they go
// through the launcher, as the shipped binary does there.

const helperEnv = "PTYHOST_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "args":
		for _, a := range os.Args[1:] {
			fmt.Printf("ARG[%s]\r\n", strconv.Quote(a))
		}
		fmt.Print("ARGS-END\r\n")
		os.Exit(0)
	case "cmdline":
		// The command line as the child got it, before any splitting.
		fmt.Printf("LINE[%s]\r\n", strconv.Quote(windows.UTF16PtrToString(windows.GetCommandLine())))
		os.Exit(0)
	case "code":
		n, _ := strconv.ParseUint(os.Args[1], 0, 32)
		windows.ExitProcess(uint32(n))
	case "tree":
		// Two grandchildren that would run for ever; their pids on the
		// console; then wait to be ended.
		for i := 0; i < 2; i++ {
			c := exec.Command(os.Args[0])
			c.Env = append(os.Environ(), helperEnv+"=sleep")
			if err := c.Start(); err != nil {
				fmt.Printf("START FAILED %v\r\n", err)
				os.Exit(3)
			}
			fmt.Printf("PID %d\r\n", c.Process.Pid)
		}
		fmt.Print("TREE-READY\r\n")
		blockForever()
	case "sleep":
		blockForever()
	case "drip":
		// Output in pieces, as conhost may still write after its
		// console was closed: a line every 100 ms, then exit.
		n, _ := strconv.Atoi(os.Args[1])
		for i := 0; i < n; i++ {
			fmt.Printf("DRIP %d\r\n", i)
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Print("DRIP-END\r\n")
		os.Exit(0)
	case "trapint":
		// A program that traps Ctrl-C: it says so when it gets one and
		// exits 7; with none it runs until it is ended.
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		fmt.Print("TRAP-READY\r\n")
		<-c
		fmt.Print("GOT-INT\r\n")
		os.Exit(7)
	case "flood":
		lines, _ := strconv.Atoi(os.Args[1])
		var b bytes.Buffer
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&b, "L%06d %s\r\n", i, strings.Repeat(string(rune('a'+i%26)), 40))
			if b.Len() > 32<<10 {
				os.Stdout.Write(b.Bytes())
				b.Reset()
			}
		}
		os.Stdout.Write(b.Bytes())
		os.Exit(0)
	}
	os.Exit(99)
}

// reader collects a Process's output in the background until EOF.
type reader struct {
	p    *Process
	ch   chan []byte
	done chan error
	buf  bytes.Buffer
}

func startReader(p *Process) *reader {
	r := &reader{p: p, ch: make(chan []byte, 64), done: make(chan error, 1)}
	go func() {
		for {
			b := make([]byte, 64<<10)
			n, err := p.Read(b)
			if n > 0 {
				r.ch <- b[:n]
			}
			if err != nil {
				close(r.ch)
				r.done <- err
				return
			}
		}
	}()
	return r
}

var vtSeq = regexp.MustCompile("\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)|[@-Z\\\\-_])")

// text is the output so far without VT sequences.
func (r *reader) text() string { return vtSeq.ReplaceAllString(r.buf.String(), "") }

// waitFor reads until the plain text matches re, or fails at the deadline.
func (r *reader) waitFor(t *testing.T, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	deadline := time.After(within)
	for {
		if m := re.FindStringSubmatch(r.text()); m != nil {
			return m
		}
		select {
		case b, ok := <-r.ch:
			if !ok {
				t.Fatalf("output ended before %v; got %q", re, r.text())
			}
			r.buf.Write(b)
		case <-deadline:
			t.Fatalf("no %v within %v; got %q", re, within, r.text())
		}
	}
}

// toEOF reads to the end of the output.
func (r *reader) toEOF(t *testing.T, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case b, ok := <-r.ch:
			if !ok {
				if err := <-r.done; err != io.EOF {
					t.Fatalf("read: %v", err)
				}
				return r.text()
			}
			r.buf.Write(b)
		case <-deadline:
			t.Fatalf("no EOF within %v; got %q", within, r.text())
		}
	}
}

func start(t *testing.T, cfg Config) *Process {
	t.Helper()
	if cfg.Cols == 0 {
		cfg.Cols, cfg.Rows = 120, 40
	}
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func exitOf(t *testing.T, p *Process, within time.Duration) Status {
	t.Helper()
	done := make(chan struct{})
	var st Status
	var err error
	go func() { st, err = p.ExitStatus(); close(done) }()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("child did not exit within %v", within)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func helper(role string, args ...string) Config {
	self, _ := os.Executable()
	return Config{Cmd: self, Args: args, Env: map[string]string{helperEnv: role}}
}

func TestCmdOutputAndExitCode(t *testing.T) {
	p := start(t, Config{Cmd: "cmd.exe", Args: []string{"/c", "echo hello-from-cmd& exit 4"}})
	r := startReader(p)
	out := r.toEOF(t, 30*time.Second)
	if !strings.Contains(out, "hello-from-cmd") {
		t.Errorf("output %q lacks the echo", out)
	}
	if st := exitOf(t, p, 10*time.Second); st.Code != 4 || st.Signal != 0 {
		t.Errorf("status %+v, want code 4", st)
	}
}

func TestInteractiveCmd(t *testing.T) {
	p := start(t, Config{Cmd: "cmd.exe", Args: []string{"/q", "/k", "prompt $G"}})
	r := startReader(p)
	// The answer differs from what was typed, so an echo of the input
	// cannot pass for it.
	if _, err := p.Write([]byte("set /a 6*7+1000\r")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, regexp.MustCompile(`1042`), 30*time.Second)
	if _, err := p.Write([]byte("exit 5\r")); err != nil {
		t.Fatal(err)
	}
	r.toEOF(t, 30*time.Second)
	if st := exitOf(t, p, 10*time.Second); st.Code != 5 {
		t.Errorf("status %+v, want code 5", st)
	}
}

func TestCommandLineQuoting(t *testing.T) {
	args := []string{"plain", "two words", `quo"te`, `trail\`, `back\\"slash`, "", `a\b c\`, "tab\there"}
	cfg := helper("args", args...)
	p := start(t, cfg)
	r := startReader(p)
	out := r.toEOF(t, 30*time.Second)
	var got []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if !strings.HasPrefix(line, "ARG[") || !strings.HasSuffix(line, "]") {
			continue
		}
		s, err := strconv.Unquote(line[4 : len(line)-1])
		if err != nil {
			t.Fatalf("helper line %q: %v", line, err)
		}
		got = append(got, s)
	}
	if fmt.Sprint(got) != fmt.Sprint(args) || len(got) != len(args) {
		t.Errorf("child saw %q, want %q (output %q)", got, args, out)
	}
}

func TestExitCodeUnsigned(t *testing.T) {
	p := start(t, helper("code", "0xC0000005"))
	startReader(p).toEOF(t, 30*time.Second)
	if st := exitOf(t, p, 10*time.Second); st.Code != 0xC0000005 || st.Signal != 0 {
		t.Errorf("status %+v, want code %d", st, uint32(0xC0000005))
	}
}

// alive reports whether pid names a running process.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

// waitGone waits for pid to end, by its handle.
func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return // gone already
	}
	defer windows.CloseHandle(h)
	if ev, _ := windows.WaitForSingleObject(h, uint32(within/time.Millisecond)); ev != windows.WAIT_OBJECT_0 {
		t.Errorf("process %d still runs %v after its tree was ended", pid, within)
	}
}

func treePids(t *testing.T, r *reader) []int {
	t.Helper()
	m := r.waitFor(t, regexp.MustCompile(`(?s)PID (\d+).*PID (\d+).*TREE-READY`), 30*time.Second)
	var pids []int
	for _, s := range m[1:] {
		n, _ := strconv.Atoi(s)
		if !alive(n) {
			t.Fatalf("grandchild %d is not running", n)
		}
		pids = append(pids, n)
	}
	return pids
}

func TestHangupSignalEndsTree(t *testing.T) {
	p := start(t, helper("tree"))
	r := startReader(p)
	pids := append(treePids(t, r), p.Pid())
	if err := p.SignalGroup(syscall.SIGHUP); err != nil { // SIGHUP, as CLOSE sends
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid, 10*time.Second)
	}
	if st := exitOf(t, p, 10*time.Second); st.SignalName() != "SIGHUP" || st.Code != 129 {
		t.Errorf("status %+v (%s), want SIGHUP, code 129", st, st.SignalName())
	}
	r.toEOF(t, 30*time.Second)
	if n := p.jobCount(); n != 0 {
		t.Errorf("job still has %d processes", n)
	}
}

func TestCloseEndsTree(t *testing.T) {
	p := start(t, helper("tree"))
	r := startReader(p)
	pids := append(treePids(t, r), p.Pid())
	p.Close()
	for _, pid := range pids {
		waitGone(t, pid, 10*time.Second)
	}
}

func TestOutputDrainedBeforeEOF(t *testing.T) {
	const lines = 3000
	p := start(t, helper("flood", strconv.Itoa(lines)))
	out := startReader(p).toEOF(t, 60*time.Second)
	for i := 0; i < lines; i++ {
		want := fmt.Sprintf("L%06d %s", i, strings.Repeat(string(rune('a'+i%26)), 40))
		if !strings.Contains(out, want) {
			t.Fatalf("line %d missing from %d bytes of output (last 200: %q)", i, len(out), out[max(0, len(out)-200):])
		}
	}
	if st := exitOf(t, p, 10*time.Second); st.Code != 0 {
		t.Errorf("status %+v", st)
	}
}

// TestSigintTypesCtrlC: SIGINT and a typed ^C reach a program that traps
// Ctrl-C, which survives them, and the terminal ends with that program's
// own exit code (under Wine the launcher, which the Ctrl-C reaches too,
// once died of it and the terminal ended at once with its exit code 0).
func TestSigintTypesCtrlC(t *testing.T) {
	for _, how := range []string{"signal", "byte"} {
		t.Run(how, func(t *testing.T) {
			p := start(t, helper("trapint"))
			r := startReader(p)
			r.waitFor(t, regexp.MustCompile(`TRAP-READY`), 30*time.Second)
			if how == "signal" {
				if err := p.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			} else if _, err := p.Write([]byte{0x03}); err != nil {
				t.Fatal(err)
			}
			out := r.toEOF(t, 30*time.Second)
			if !strings.Contains(out, "GOT-INT") {
				t.Errorf("the program never saw the Ctrl-C; output %q", out)
			}
			if st := exitOf(t, p, 10*time.Second); st.Code != 7 || st.Signal != 0 {
				t.Errorf("status %+v, want the program's own code 7", st)
			}
		})
	}
	p := start(t, Config{Cmd: "cmd.exe", Args: []string{"/c", "exit 0"}})
	if err := p.Signal(syscall.SIGQUIT); err == nil {
		t.Error("SIGQUIT accepted; Windows has nothing to give it")
	}
	startReader(p).toEOF(t, 30*time.Second)
}

func TestResize(t *testing.T) {
	// A child that runs until it is ended: the console must still be
	// there to be resized (see TestResizeAfterConsoleClosed).
	cfg := helper("sleep")
	cfg.Cols, cfg.Rows = 100, 30
	p := start(t, cfg)
	if c, r, _ := p.Size(); c != 100 || r != 30 {
		t.Errorf("initial size %dx%d", c, r)
	}
	// What Resize hands to ConPTY (clamped), where Wine cannot apply it.
	var seen []windows.Coord
	real := resizeConsole
	resizeConsole = func(h windows.Handle, c windows.Coord) error { seen = append(seen, c); return nil }
	p.Resize(70000, 0)
	p.Resize(132, 43)
	resizeConsole = real
	if fmt.Sprint(seen) != "[{32767 1} {132 43}]" {
		t.Errorf("ResizePseudoConsole got %v", seen)
	}
	if c, r, _ := p.Size(); c != 132 || r != 43 {
		t.Errorf("size after resize %dx%d", c, r)
	}
	err := p.Resize(90, 20)
	switch {
	case IsWine():
		// Wine's ResizePseudoConsole is a stub: the error must say so
		// and the size stays.
		if err == nil {
			t.Log("Wine applied ResizePseudoConsole: a newer Wine than 8?")
		} else if c, r, _ := p.Size(); c != 132 || r != 43 {
			t.Errorf("failed resize changed the size to %dx%d", c, r)
		}
	case err != nil:
		t.Errorf("Resize: %v", err)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	startReader(p).toEOF(t, 30*time.Second)
}

// Once the pseudo-console is closed, Resize must not reach
// ResizePseudoConsole: ClosePseudoConsole frees the memory the HPCON
// points to, and a RESIZE can come until the terminal's EXIT (a host that
// resizes its window while the reader is parked on credit, or during the
// output's drain). Both ways the console closes: the child exited by
// itself, and Hangup of a running child.
func TestResizeAfterConsoleClosed(t *testing.T) {
	var calls []windows.Coord
	real := resizeConsole
	resizeConsole = func(h windows.Handle, c windows.Coord) error { calls = append(calls, c); return nil }
	t.Cleanup(func() { resizeConsole = real })
	closed := func(p *Process) {
		t.Helper()
		select {
		case <-p.consoleDone:
		case <-time.After(30 * time.Second):
			t.Fatal("the pseudo-console was not closed within 30s")
		}
	}

	exited := start(t, Config{Cmd: "cmd.exe", Args: []string{"/c", "exit 0"}, Cols: 100, Rows: 30})
	r := startReader(exited)
	closed(exited)
	err := exited.Resize(90, 20)
	if !errors.Is(err, errConsoleClosed) {
		t.Errorf("Resize after the child exited: %v, want %v", err, errConsoleClosed)
	}
	r.toEOF(t, 30*time.Second)

	running := start(t, helper("sleep"))
	if err := running.Resize(101, 31); err != nil {
		t.Fatalf("Resize of a running child: %v", err)
	}
	running.Hangup()
	closed(running)
	if err := running.Resize(102, 32); !errors.Is(err, errConsoleClosed) {
		t.Errorf("Resize after Hangup: %v, want %v", err, errConsoleClosed)
	}
	if c, r, _ := running.Size(); c != 101 || r != 31 {
		t.Errorf("size after the refused resize %dx%d, want 101x31", c, r)
	}
	if fmt.Sprint(calls) != "[{101 31}]" {
		t.Errorf("ResizePseudoConsole was called with %v; want only the running console's {101 31}", calls)
	}
}

// Once the output pipe has outlived its console (orphaned: see
// watchOrphan), output that still comes is read to its end, however long
// it takes, as long as the pipe is never quiet for orphanBound: conhost
// may write its last frame after ClosePseudoConsole returned (Windows 11
// 24H2 does not wait for it), later still when the reader was parked on
// credit and conhost's writes waited behind a full pipe. The test sets
// the orphaned state as watchOrphan does while a child still writes a
// line every 100 ms.
func TestOrphanedPipeReadUntilQuiet(t *testing.T) {
	p := start(t, helper("drip", "6"))
	r := startReader(p)
	r.waitFor(t, regexp.MustCompile(`DRIP 0`), 30*time.Second)
	p.orphanMu.Lock()
	p.orphaned.Store(true)
	p.out.SetReadDeadline(time.Now())
	p.orphanMu.Unlock()
	out := r.toEOF(t, 30*time.Second)
	for _, want := range []string{"DRIP 1", "DRIP 5", "DRIP-END"} {
		if !strings.Contains(out, want) {
			t.Errorf("output after the pipe was orphaned lacks %q: %q", want, out)
		}
	}
	if st := exitOf(t, p, 10*time.Second); st.Code != 0 {
		t.Errorf("exit %+v", st)
	}
}

func TestEnvironCaseInsensitive(t *testing.T) {
	t.Setenv("PtyhostMixed", "ours")
	cfg := Config{Env: map[string]string{"PTYHOSTMIXED": "theirs", "term": "dumb"}}
	var got []string
	for _, kv := range cfg.environWindows() {
		if k, _ := envName(kv); strings.EqualFold(k, "PtyhostMixed") || strings.EqualFold(k, "TERM") {
			got = append(got, kv)
		}
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[PtyhostMixed=theirs TERM=dumb]" && fmt.Sprint(got) != "[PtyhostMixed=theirs term=dumb]" {
		t.Errorf("merged %q", got)
	}
}

// A batch file's arguments reach it as its %N, and none of them runs as a
// command: cmd.exe, which runs every batch file, reads a command line by
// its own rules ("BatBadBut"). Found by bare name through PATH+PATHEXT,
// as npm.cmd would be.
func TestBatchFileArguments(t *testing.T) {
	dir, err := os.MkdirTemp("", "batch")
	if err != nil {
		t.Fatal(err)
	}
	bat := filepath.Join(dir, "ptyhostargs.bat")
	t.Cleanup(func() { os.Remove(bat); os.Remove(dir) })
	// %N, not %~N: the script's own lines must not run what they echo.
	script := "@echo off\r\necho ARG1[%1]\r\necho ARG2[%2]\r\necho ARG3[%3]\r\necho ARG4[%4]\r\necho ARG5[%5]\r\necho BAT-END\r\nexit /b 5\r\n"
	if err := os.WriteFile(bat, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": dir + ";" + os.Getenv("PATH"), "PATHEXT": ".EXE;.BAT"}
	args := []string{`x"&echo INJECTED&"`, "100%", "a b&echo INJECTED2", "plain", `(^!x!|<>)`}
	p := start(t, Config{Cmd: "ptyhostargs", Args: args, Env: env})
	out := startReader(p).toEOF(t, 30*time.Second)
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	if lines["INJECTED"] || lines["INJECTED2"] {
		t.Errorf("an argument ran as a command; output %q", out)
	}
	for _, want := range []string{`ARG1["x""&echo INJECTED&"""]`, `ARG3["a b&echo INJECTED2"]`, "ARG4[plain]", `ARG5["(^!x!|<>)"]`, "BAT-END"} {
		if !lines[want] {
			t.Errorf("no line %q in the output %q", want, out)
		}
	}
	if st := exitOf(t, p, 10*time.Second); st.Code != 5 {
		t.Errorf("status %+v, want the batch file's code 5", st)
	}
	// What cmd.exe cannot take is refused, with the reason.
	_, err = Start(Config{Cmd: bat, Args: []string{"two\nlines"}, Cols: 80, Rows: 24})
	if err == nil || !strings.Contains(err.Error(), "line feed") {
		t.Errorf("argument with a line feed: %v, want a refusal", err)
	}
}

// The command line cmd.exe is given for a batch file (%NAME% is not
// expanded there, as Wine's cmd.exe, which expands again what a script
// echoes, cannot show end to end).
func TestBatchCommandLine(t *testing.T) {
	app, line, err := batchCommandLine(`C:\dir\x.bat`, []string{"plain", "", `a"b`, "%PATH%", `t\`, "a b", `c:\x\y`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(filepath.Base(app), "cmd.exe") || !filepath.IsAbs(app) {
		t.Errorf("app %q, want the system's cmd.exe", app)
	}
	want := `cmd.exe /e:ON /v:OFF /d /c ""C:\dir\x.bat" plain "" "a""b" "%%cd:~,%PATH%%cd:~,%" "t\\" "a b" c:\x\y"`
	if line != want {
		t.Errorf("command line\n%s\nwant\n%s", line, want)
	}
	if _, _, err := batchCommandLine(`C:\dir\x.bat`, []string{"a\rb"}); err == nil {
		t.Error("carriage return accepted")
	}
	if _, _, err := batchCommandLine(`C:\100%\x.bat`, nil); err == nil {
		t.Error("script path with '%' accepted")
	}
}

// TERM is xterm-256color before env is applied, whatever TERM the
// sidecar has (PROTOCOL.md, OPEN), as on Unix; env may still set it.
func TestEnvironTermDefault(t *testing.T) {
	t.Setenv("TERM", "cygwin")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "TERM=" + DefaultTerm},
		{map[string]string{"term": "dumb"}, "TERM=dumb"},
	} {
		cfg := Config{Env: c.env}
		var got []string
		for _, kv := range cfg.environWindows() {
			if k, _ := envName(kv); strings.EqualFold(k, "TERM") {
				got = append(got, kv)
			}
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("env %v: TERM entries %q, want [%s]", c.env, got, c.want)
		}
	}
}

// Two names in env that are one variable on Windows: the later one in
// the host's order wins, every time; with no order given, the later in
// byte order.
func TestEnvironCaseClashDeterministic(t *testing.T) {
	value := func(cfg Config) string {
		v := ""
		for _, kv := range cfg.environWindows() {
			if k, _ := envName(kv); strings.EqualFold(k, "PTYHOSTZVAR") {
				if v != "" {
					t.Fatalf("two entries for one variable: %q and %q", v, kv)
				}
				v = kv[len(k)+1:]
			}
		}
		return v
	}
	env := map[string]string{"PtyhostZvar": "first", "PTYHOSTZVAR": "second"}
	for i := 0; i < 50; i++ { // map order changes from one range to the next
		if v := value(Config{Env: env, EnvOrder: []string{"PtyhostZvar", "PTYHOSTZVAR"}}); v != "second" {
			t.Fatalf("run %d: %q won, want the later one sent, second", i, v)
		}
		if v := value(Config{Env: env, EnvOrder: []string{"PTYHOSTZVAR", "PtyhostZvar"}}); v != "first" {
			t.Fatalf("run %d: %q won, want the later one sent, first", i, v)
		}
		if v := value(Config{Env: env}); v != "first" { // "PtyhostZvar" > "PTYHOSTZVAR"
			t.Fatalf("run %d: %q won without an order, want first", i, v)
		}
	}
}

func TestResolvePathext(t *testing.T) {
	// Not t.TempDir: its RemoveAll fails under Wine 8 (no POSIX-style
	// delete), and that would fail the test for Wine's sake.
	dir, err := os.MkdirTemp("", "resolve")
	if err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(dir, "tool.cmd")
	t.Cleanup(func() { os.Remove(tool); os.Remove(dir) })
	if err := os.WriteFile(tool, []byte("@echo off\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"Path=" + dir, "PATHEXT=.EXE;.CMD"}
	p, err := resolveWindows("tool", env, "")
	if err != nil || !strings.EqualFold(p, filepath.Join(dir, "tool.cmd")) {
		t.Errorf("resolve tool: %q, %v", p, err)
	}
	if _, err := resolveWindows("absent", env, ""); err == nil {
		t.Error("absent program resolved")
	}
	if p, err := resolveWindows("cmd", os.Environ(), ""); err != nil || !strings.HasSuffix(strings.ToLower(p), `\cmd.exe`) {
		t.Errorf("resolve cmd: %q, %v", p, err)
	}
	// A program the host names by its path runs whatever PATHEXT says,
	// as CreateProcess runs it; a bare name still needs PATHEXT.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	noExe := []string{"Path=" + filepath.Dir(self), "PATHEXT=.BAT;.CMD"}
	if p, err := resolveWindows(self, noExe, ""); err != nil || p != self {
		t.Errorf("resolve %s with PATHEXT .BAT;.CMD: %q, %v; want it as named", self, p, err)
	}
	if p, err := resolveWindows(filepath.Base(self), noExe, ""); err == nil {
		t.Errorf("bare %s resolved to %q with PATHEXT .BAT;.CMD", filepath.Base(self), p)
	}
	// The extensions still come first: tool.cmd for a named "tool".
	if p, err := resolveWindows(filepath.Join(dir, "tool"), noExe, ""); err != nil || !strings.EqualFold(p, tool) {
		t.Errorf("resolve %s: %q, %v; want %s", filepath.Join(dir, "tool"), p, err, tool)
	}
}

// A program named relative to the OPEN's cwd (a cmd with a directory
// part, or found through a relative PATH entry) is the one under that
// cwd, on both paths: CreateProcess takes a relative name relative to
// the caller's directory, which is not the child's. Under Wine the real
// Windows path is the one without the launcher (its output is lost
// there, its exit code is not).
func TestRelativeProgramResolvedInDir(t *testing.T) {
	dir, err := os.MkdirTemp("", "relprog")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "sub", "ptyhostrel.exe")
	t.Cleanup(func() { os.Remove(prog); os.Remove(filepath.Dir(prog)); os.Remove(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "never"} {
		t.Run("launcher="+mode, func(t *testing.T) {
			t.Setenv(launcherMode, mode)
			for i, cfg := range []Config{
				{Cmd: `sub\ptyhostrel.exe`, Dir: dir, Env: map[string]string{helperEnv: "code"}},
				{Cmd: `.\sub\ptyhostrel`, Dir: dir, Env: map[string]string{helperEnv: "code"}},
				{Cmd: "ptyhostrel", Dir: dir, Env: map[string]string{helperEnv: "code", "PATH": "sub;" + os.Getenv("PATH")}},
			} {
				code := 40 + i
				cfg.Args = []string{strconv.Itoa(code)}
				p := start(t, cfg)
				if st := exitOf(t, p, 20*time.Second); st.Code != code {
					t.Errorf("%s in %s: status %+v, want %d", cfg.Cmd, dir, st, code)
				}
			}
		})
	}
}

// A terminal that has ended leaves no handle to its child behind: the
// process handle is closed once the exit code is read, so the process
// object is released (a sidecar held one for every terminal it ever
// ran), and Reap still answers after Close.
func TestEndedProcessReleased(t *testing.T) {
	const code = 23
	p, err := Start(helper("code", strconv.Itoa(code)))
	if err != nil {
		t.Fatal(err)
	}
	startReader(p).toEOF(t, 30*time.Second)
	if st := exitOf(t, p, 10*time.Second); st.Code != code {
		t.Errorf("status %+v, want %d", st, code)
	}
	p.Close()
	if st, err := p.Reap(); err != nil || st.Code != code {
		t.Errorf("Reap after Close: %+v, %v; want %d", st, err, code)
	}
	// The pseudo-console's host, which lets go of its console's processes
	// as it ends, is closed in the background: wait for that.
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(p.Pid()))
		if err != nil {
			return // released
		}
		var got uint32
		err = windows.GetExitCodeProcess(h, &got)
		windows.CloseHandle(h)
		if err != nil || got != code {
			return // the pid was given to a new process already
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ended child %d (exit code %d) can still be opened 10s after Close: a handle to it was left open", p.Pid(), got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A program that exists but cannot be run fails Start with
// CreateProcess's reason, on both paths: under Wine the launcher started
// and the terminal ended at once with exit code 9009, so the host saw a
// terminal open instead of a spawn that failed.
func TestUnrunnableProgramFailsStart(t *testing.T) {
	dir, err := os.MkdirTemp("", "unrunnable")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "notaprogram.exe")
	t.Cleanup(func() { os.Remove(prog); os.Remove(dir) })
	if err := os.WriteFile(prog, []byte("not a program\r\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "never"} {
		t.Run("launcher="+mode, func(t *testing.T) {
			t.Setenv(launcherMode, mode)
			p, err := Start(Config{Cmd: prog, Cols: 80, Rows: 24})
			if err == nil {
				st := exitOf(t, p, 20*time.Second)
				p.Close()
				t.Fatalf("Start of %s succeeded; the terminal ended with %+v", prog, st)
			}
			if !strings.Contains(err.Error(), "CreateProcess") || !strings.Contains(err.Error(), prog) {
				t.Errorf("error %q, want CreateProcess's reason for %s", err, prog)
			}
		})
	}
	// A program that runs is still started, and what it does is its own.
	p := start(t, helper("code", "6"))
	startReader(p).toEOF(t, 30*time.Second)
	if st := exitOf(t, p, 10*time.Second); st.Code != 6 {
		t.Errorf("status %+v, want 6", st)
	}
}

// blockForever is what a helper that runs until it is killed does. Not
// select{}: with no other goroutine the runtime would call that a
// deadlock and end the process.
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// TestWineDetected: under Wine (make test-windows runs there, with
// WINEPREFIX in the environment Wine passes on) the backend must know,
// as it takes the launcher path only there.
func TestWineDetected(t *testing.T) {
	underWine := os.Getenv("WINEPREFIX") != ""
	if IsWine() != underWine {
		t.Errorf("IsWine() = %v, but WINEPREFIX is %q", IsWine(), os.Getenv("WINEPREFIX"))
	}
	if os.Getenv(launcherMode) == "" && useLauncher() != underWine {
		t.Errorf("launcher path %v under Wine %v", useLauncher(), underWine)
	}
}

// CmdLine is the child's command line after the program, as it is: a
// program gets exactly that line, cmd.exe /c a command that holds quotes
// (through Args its quotes came out as \"), and a program whose path has
// spaces runs through cmd /c ""path" args", node-pty's args as a string.
// A batch file is refused one, as is a CmdLine beside Args.
func TestVerbatimCommandLine(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	line := `plain "two words" x\"y  %PATH% "`
	p := start(t, Config{Cmd: self, CmdLine: line, Env: map[string]string{helperEnv: "cmdline"}})
	m := startReader(p).waitFor(t, regexp.MustCompile(`LINE\[(".*")\]`), 30*time.Second)
	got, err := strconv.Unquote(m[1])
	if want := windows.ComposeCommandLine([]string{self}) + " " + line; err != nil || got != want {
		t.Errorf("the child's command line\n%s\nwant\n%s (%v)", got, want, err)
	}

	p = start(t, Config{Cmd: "cmd.exe", CmdLine: `/c echo "a b"& exit 3`})
	out := startReader(p).toEOF(t, 30*time.Second)
	if !regexp.MustCompile(`(?m)^"a b" ?\r?$`).MatchString(out) {
		t.Errorf("cmd.exe /c echo \"a b\" printed %q, want the quotes intact", out)
	}
	if st := exitOf(t, p, 10*time.Second); st.Code != 3 {
		t.Errorf("status %+v, want 3", st)
	}

	dir, err := os.MkdirTemp("", "verbatim")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "with spaces", "prog.exe")
	bat := filepath.Join(dir, "x.bat")
	t.Cleanup(func() { os.Remove(prog); os.Remove(bat); os.Remove(filepath.Dir(prog)); os.Remove(dir) })
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "never"} {
		t.Run("launcher="+mode, func(t *testing.T) {
			t.Setenv(launcherMode, mode)
			cfg := Config{Cmd: "cmd.exe", CmdLine: `/d /c ""` + prog + `" 5"`, Env: map[string]string{helperEnv: "code"}}
			if st := exitOf(t, start(t, cfg), 20*time.Second); st.Code != 5 {
				t.Errorf("%s: status %+v, want the program's 5", cfg.CmdLine, st)
			}
		})
	}

	if err := os.WriteFile(bat, []byte("@echo off\r\necho RAN\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{Cmd: bat, CmdLine: `"&echo INJECTED&"`},
		{Cmd: "cmd.exe", Args: []string{"/c"}, CmdLine: "echo x"},
	} {
		cfg.Cols, cfg.Rows = 80, 24
		if p, err := Start(cfg); err == nil {
			p.Close()
			t.Errorf("%s with CmdLine %q and Args %q started", cfg.Cmd, cfg.CmdLine, cfg.Args)
		} else if want := map[bool]string{true: "batch file", false: "cannot both"}[cfg.Cmd == bat]; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cfg.Cmd, err, want)
		}
	}
}
