package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
	"golang.org/x/sys/windows"
)

// These tests drive the real sidecar over its stdin and stdout: the
// binary named by PTYPLEX_SIDECAR (make test-windows builds it), or else
// this test binary acting as one (main, unchanged). The terminals run
// cmd.exe and this binary in the helper roles below. Under Wine they take
// the launcher path, as the shipped binary does there.

const (
	roleEnv    = "PTYPLEX_SIDECAR_TEST_ROLE"
	floodLines = 1500
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "":
		os.Exit(m.Run())
	case "sidecar":
		// The arguments are the sidecar's (--persist for
		// TestPersistRefused); main parses them.
		main()
		os.Exit(0)
	case "tree":
		fmt.Printf("SELF %d\r\n", os.Getpid())
		for i := 0; i < 2; i++ {
			c := exec.Command(os.Args[0])
			c.Env = append(os.Environ(), roleEnv+"=sleep")
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
	case "flood":
		lines := floodLines
		if n, err := strconv.Atoi(os.Getenv("FLOOD_LINES")); err == nil {
			lines = n
		}
		w := bufio.NewWriterSize(os.Stdout, 32<<10)
		for i := 0; i < lines; i++ {
			w.WriteString(floodLine(i) + "\r\n")
		}
		w.Flush()
		os.Exit(0)
	}
	os.Exit(99)
}

func floodLine(i int) string {
	return fmt.Sprintf("L%06d %s", i, strings.Repeat(string(rune('a'+i%26)), 40))
}

func sidecarPath(t *testing.T) (string, []string) {
	if p := os.Getenv("PTYPLEX_SIDECAR"); p != "" {
		return p, nil
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self, []string{roleEnv + "=sidecar"}
}

func selfPath(t *testing.T) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// host is a test's end of one sidecar: frames out on stdin, frames in
// from stdout, stderr kept.
type host struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	frames  chan proto.Frame
	readErr chan error
	stderr  *lockedBuf
	exited  chan error
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startHost(t *testing.T, args ...string) *host {
	t.Helper()
	path, env := sidecarPath(t)
	h := &host{t: t, frames: make(chan proto.Frame, 1024), readErr: make(chan error, 1), stderr: &lockedBuf{}, exited: make(chan error, 1)}
	h.cmd = exec.Command(path, args...)
	h.cmd.Env = append(os.Environ(), env...)
	h.cmd.Stderr = h.stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := proto.NewReader(stdout)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				close(h.frames)
				h.readErr <- err
				return
			}
			h.frames <- f
		}
	}()
	go func() { h.exited <- h.cmd.Wait() }()
	t.Cleanup(func() {
		h.stdin.Close()
		select {
		case <-h.exited:
		case <-time.After(20 * time.Second):
			h.cmd.Process.Kill()
			t.Errorf("sidecar did not exit after its stdin closed; stderr:\n%s", h.stderr)
		}
	})
	return h
}

func (h *host) send(typ proto.Type, v any) {
	h.t.Helper()
	if err := proto.WriteFrame(h.stdin, typ, proto.Marshal(v)); err != nil {
		h.t.Fatalf("write %v: %v", typ, err)
	}
}

func (h *host) input(id, s string) {
	h.t.Helper()
	body, _ := proto.DataBody(id, []byte(s))
	if err := proto.WriteFrame(h.stdin, proto.TypeInput, body); err != nil {
		h.t.Fatal(err)
	}
}

// next returns the next frame, failing at the deadline.
func (h *host) next(within time.Duration) proto.Frame {
	h.t.Helper()
	select {
	case f, ok := <-h.frames:
		if !ok {
			h.t.Fatalf("sidecar stdout ended (%v); stderr:\n%s", <-h.readErr, h.stderr)
		}
		return f
	case <-time.After(within):
		h.t.Fatalf("no frame within %v; stderr:\n%s", within, h.stderr)
	}
	return proto.Frame{}
}

// term is what a test saw of one terminal.
type term struct {
	pid    int
	out    bytes.Buffer
	exit   *proto.Exit
	errMsg string
}

var vtSeq = regexp.MustCompile("\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)|[@-Z\\\\-_])")

func (tm *term) text() string { return vtSeq.ReplaceAllString(tm.out.String(), "") }

// collect reads frames into terms until done says stop, failing at the
// deadline. onOutput, if set, sees every OUTPUT frame as it arrives.
func (h *host) collect(terms map[string]*term, within time.Duration, done func() bool, onOutput func(id string, n int)) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for !done() {
		f := h.next(time.Until(deadline))
		switch f.Type {
		case proto.TypeOpened:
			var o proto.Opened
			json.Unmarshal(f.Body, &o)
			terms[o.TerminalID].pid = o.PID
		case proto.TypeOutput:
			id, data, err := proto.ParseData(f.Body)
			if err != nil {
				h.t.Fatal(err)
			}
			terms[id].out.Write(data)
			if onOutput != nil {
				onOutput(id, len(data))
			}
		case proto.TypeExit:
			var e proto.Exit
			json.Unmarshal(f.Body, &e)
			terms[e.TerminalID].exit = &e
		case proto.TypeError:
			var e proto.Error
			json.Unmarshal(f.Body, &e)
			if tm := terms[e.TerminalID]; tm != nil {
				tm.errMsg = e.Message
			} else {
				h.t.Fatalf("ERROR %s", f.Body)
			}
		}
	}
}

func exited(tm *term) func() bool { return func() bool { return tm.exit != nil || tm.errMsg != "" } }

func TestOpenCmdOutputAndExit(t *testing.T) {
	h := startHost(t)
	terms := map[string]*term{"a": {}}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "a", Cols: 100, Rows: 30, Cmd: "cmd.exe", Args: []string{"/c", "echo out-of-cmd& exit 4"}})
	h.collect(terms, 60*time.Second, exited(terms["a"]), nil)
	tm := terms["a"]
	if tm.errMsg != "" {
		t.Fatal(tm.errMsg)
	}
	if !strings.Contains(tm.text(), "out-of-cmd") {
		t.Errorf("output %q lacks the echo", tm.text())
	}
	if tm.exit.ExitCode == nil || *tm.exit.ExitCode != 4 || tm.exit.Signal != "" {
		t.Errorf("EXIT %+v, want code 4", *tm.exit)
	}
	if tm.pid <= 0 {
		t.Errorf("OPENED pid %d", tm.pid)
	}
}

func TestInteractiveCmd(t *testing.T) {
	h := startHost(t)
	tm := &term{}
	terms := map[string]*term{"i": tm}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "i", Cols: 100, Rows: 30, Cmd: "cmd.exe", Args: []string{"/q", "/k", "prompt $G"}, UTF8: true})
	h.input("i", "set /a 6*7+1000\r")
	h.collect(terms, 60*time.Second, func() bool { return strings.Contains(tm.text(), "1042") || tm.exit != nil }, nil)
	if !strings.Contains(tm.text(), "1042") {
		t.Fatalf("no answer to the typed command: %q", tm.text())
	}
	h.input("i", "exit 0\r")
	h.collect(terms, 60*time.Second, exited(tm), nil)
	if tm.exit.ExitCode == nil || *tm.exit.ExitCode != 0 {
		t.Errorf("EXIT %+v", *tm.exit)
	}
}

// TestUTF8BackspaceErasesCharacter: utf8 is accepted on Windows and is
// what the console does anyway: a backspace typed after a two-byte
// character erases the whole character, never half of it.
func TestUTF8BackspaceErasesCharacter(t *testing.T) {
	h := startHost(t)
	tm := &term{}
	terms := map[string]*term{"u": tm}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "u", Cols: 100, Rows: 30, Cmd: "cmd.exe", Args: []string{"/q", "/k", "prompt $G"}, UTF8: true})
	h.input("u", "echo [x\u00e9\x7f]\r")
	answer := regexp.MustCompile(`(?m)^\[x\]\r?$`)
	h.collect(terms, 60*time.Second, func() bool { return answer.MatchString(tm.text()) || tm.exit != nil }, nil)
	if !answer.MatchString(tm.text()) {
		t.Fatalf("no line [x] in %q", tm.text())
	}
	t.Logf("%q", tm.out.String())
	h.input("u", "exit 0\r")
	h.collect(terms, 60*time.Second, exited(tm), nil)
}

func TestUnsignedExitCode(t *testing.T) {
	h := startHost(t)
	tm := &term{}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "u", Cols: 80, Rows: 24, Cmd: "cmd.exe", Args: []string{"/c", "exit -1073741819"}})
	h.collect(map[string]*term{"u": tm}, 60*time.Second, exited(tm), nil)
	if tm.exit == nil || tm.exit.ExitCode == nil || *tm.exit.ExitCode != 0xC0000005 {
		t.Errorf("EXIT %+v (%s), want code %d", tm.exit, tm.errMsg, uint32(0xC0000005))
	}
}

func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

func waitGone(t *testing.T, pid int, within time.Duration) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return true
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, uint32(within/time.Millisecond))
	return ev == windows.WAIT_OBJECT_0
}

func TestCloseLeavesNoProcess(t *testing.T) {
	h := startHost(t)
	tm := &term{}
	terms := map[string]*term{"tree": tm}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "tree", Cols: 80, Rows: 24, Cmd: selfPath(t), Env: map[string]string{roleEnv: "tree"}})
	re := regexp.MustCompile(`(?s)SELF (\d+).*PID (\d+).*PID (\d+).*TREE-READY`)
	h.collect(terms, 60*time.Second, func() bool { return re.MatchString(tm.text()) || tm.exit != nil }, nil)
	m := re.FindStringSubmatch(tm.text())
	if m == nil {
		t.Fatalf("tree helper said %q", tm.text())
	}
	// The child (under Wine: the launcher and the child), and its two
	// children.
	pids := []int{tm.pid}
	for _, s := range m[1:] {
		if n, _ := strconv.Atoi(s); n != tm.pid {
			pids = append(pids, n)
		}
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d of the tree %v does not run before CLOSE", pid, pids)
		}
	}
	// Everything below the sidecar, counted from the process table: the
	// tree, and whatever the pseudo-console runs (conhost).
	sidecarPid := h.cmd.Process.Pid
	before := descendants(t, sidecarPid)
	for _, pid := range pids {
		if !slices.ContainsFunc(before, func(p proc) bool { return p.pid == pid }) {
			t.Fatalf("process %d of the tree is not below the sidecar in the process table: %v", pid, names(before))
		}
	}
	h.send(proto.TypeClose, proto.Close{TerminalID: "tree"})
	h.collect(terms, 60*time.Second, exited(tm), nil)
	if tm.exit.Signal != "SIGHUP" {
		t.Errorf("EXIT after CLOSE: %s, want signal SIGHUP", exitText(tm.exit))
	}
	left := survivors(before, 10*time.Second)
	if len(left) > 0 {
		t.Errorf("%d of the %d processes below the sidecar outlived CLOSE: %v", len(left), len(before), names(left))
	}
	noDescendants(t, sidecarPid, 10*time.Second)
	t.Logf("CLOSE: %d processes below the sidecar before (%s), %d left; EXIT %s", len(before), names(before), len(left), exitText(tm.exit))
}

// TestBinaryStdio: stdin and stdout carry frames byte for byte. PINGs
// whose length fields hold LF, CR and Ctrl-Z (bodies of 9, 12 and 25
// bytes) come back as PONGs of the same bytes, and the stream stays in
// step: a text-mode stream would turn LF into CR LF (or CR LF into LF)
// and end its input at the Ctrl-Z. (Raw CR and LF in bodies cross both
// ways in every test: typed "\r", cmd.exe's "\r\n".)
func TestBinaryStdio(t *testing.T) {
	h := startHost(t)
	for _, n := range []int{9, 12, 25, 25, 12, 9} {
		body := []byte(`{"s":"` + strings.Repeat("z", n-8) + `"}`)
		if err := proto.WriteFrame(h.stdin, proto.TypePing, body); err != nil {
			t.Fatal(err)
		}
		f := h.next(30 * time.Second)
		if f.Type != proto.TypePong || !bytes.Equal(f.Body, body) {
			t.Fatalf("PING %q (frame length %#x) answered by %v %q", body, 1+len(body), f.Type, f.Body)
		}
	}
	// After all that, the stream is still in step: a terminal still runs.
	tm := &term{}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "b", Cols: 80, Rows: 24, Cmd: "cmd.exe", Args: []string{"/c", "echo still-in-step"}})
	h.collect(map[string]*term{"b": tm}, 60*time.Second, exited(tm), nil)
	if !strings.Contains(tm.text(), "still-in-step") || tm.exit == nil || tm.exit.ExitCode == nil || *tm.exit.ExitCode != 0 {
		t.Errorf("after the PINGs: output %q, EXIT %s (%s)", tm.text(), exitText(tm.exit), tm.errMsg)
	}
}

// TestPersistRefused: --persist needs Unix sockets; on Windows the
// sidecar says so on stderr, writes nothing on stdout and exits 2.
func TestPersistRefused(t *testing.T) {
	path, env := sidecarPath(t)
	cmd := exec.Command(path, "--persist", "work")
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("--persist: %v, want exit status 2", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("--persist wrote %q on stdout", stdout.Bytes())
	}
	if !strings.Contains(stderr.String(), "--persist is not supported on Windows") {
		t.Errorf("--persist said %q on stderr", stderr.String())
	}
}

// TestSaysWhatItIsOnAConsole: run by hand in a console, the sidecar says
// what it is on stderr before anyone types a line, which it would read as
// a frame header, as on Unix; run by a host (stdin a pipe) it says
// nothing. The console is a pseudo-console of the backend's.
func TestSaysWhatItIsOnAConsole(t *testing.T) {
	const note = "standard input is a terminal"
	path, env := sidecarPath(t)
	cfg := ptyhost.Config{Cmd: path, Cols: 200, Rows: 24, Env: map[string]string{}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		cfg.Env[k] = v
	}
	p, err := ptyhost.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			b.Write(buf[:n])
			if strings.Contains(vtSeq.ReplaceAllString(b.String(), ""), note) || err != nil {
				out <- b.String()
				return
			}
		}
	}()
	select {
	case text := <-out:
		if !strings.Contains(vtSeq.ReplaceAllString(text, ""), note) {
			t.Errorf("on a console the sidecar said %q, want a line with %q", text, note)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("on a console the sidecar said nothing with %q within 30s", note)
	}
	// Ctrl-Z, Enter: the end of the console's input, and the sidecar ends
	// as at the end of any input.
	p.Write([]byte("\x1a\r"))
	done := make(chan error, 1)
	go func() { _, err := p.ExitStatus(); done <- err }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Errorf("the sidecar on a console did not end at Ctrl-Z")
	}

	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("sidecar with an empty pipe as stdin: %v", err)
	}
	if strings.Contains(stderr.String(), note) {
		t.Errorf("with a pipe as stdin the sidecar said %q", stderr.String())
	}
}

// TestCtrlCOnAConsoleEndsTheSidecar: a sidecar on a console (typed
// into, or sharing its host's) that gets Ctrl-C shuts down as at the end
// of its input and says why in the words of the Unix sidecar and
// PROTOCOL.md ("received SIGINT"), status 0.
func TestCtrlCOnAConsoleEndsTheSidecar(t *testing.T) {
	path, env := sidecarPath(t)
	cfg := ptyhost.Config{Cmd: path, Cols: 200, Rows: 24, Env: map[string]string{}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		cfg.Env[k] = v
	}
	p, err := ptyhost.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := make(chan string, 2)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		wants := []string{"standard input is a terminal", "exiting with status"}
		for {
			n, err := p.Read(buf)
			b.Write(buf[:n])
			text := vtSeq.ReplaceAllString(b.String(), "")
			for len(wants) > 0 && strings.Contains(text, wants[0]) {
				seen <- text
				wants = wants[1:]
			}
			if err != nil || len(wants) == 0 {
				close(seen)
				return
			}
		}
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case text, ok := <-seen:
			if !ok {
				t.Fatalf("the console's output ended before %s", what)
			}
			return text
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s within 30s", what)
		}
		return ""
	}
	next("note that stdin is a console")
	// Ctrl-C on the console, for every process on it.
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	text := next("exit line")
	if want := "exiting with status 0: received SIGINT"; !strings.Contains(text, want) {
		t.Errorf("after Ctrl-C the sidecar said %q, want %q", text, want)
	}
	type ended struct {
		st  ptyhost.Status
		err error
	}
	done := make(chan ended, 1)
	go func() { st, err := p.ExitStatus(); done <- ended{st, err} }()
	select {
	case e := <-done:
		if e.err != nil || e.st.Code != 0 {
			t.Errorf("the sidecar ended with %+v, %v; want status 0", e.st, e.err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the sidecar did not end within 30s of its exit line")
	}
}

// TestSignalAndForegroundOnWindows: what the extensions mean on a
// pseudo-console (PROTOCOL.md, "On Windows"): OPENED lists "signal" but
// not "foreground", a FOREGROUND asked anyway is answered with neither pid
// nor process, a signal with no Windows meaning gets an ERROR that says
// so and leaves the terminal running, and SIGTERM ends the job, the
// child's whole tree, with EXIT naming the signal.
func TestSignalAndForegroundOnWindows(t *testing.T) {
	h := startHost(t)
	h.send(proto.TypeOpen, proto.Open{TerminalID: "s", Cols: 80, Rows: 24, Cmd: selfPath(t), Env: map[string]string{roleEnv: "tree"}})
	// next frame of type typ for "s", skipping OUTPUT (kept) on the way.
	var out bytes.Buffer
	next := func(typ proto.Type) proto.Frame {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			f := h.next(time.Until(deadline))
			if f.Type == proto.TypeOutput {
				_, data, _ := proto.ParseData(f.Body)
				out.Write(data)
				continue
			}
			if f.Type != typ {
				t.Fatalf("got %v %s, want %v", f.Type, f.Body, typ)
			}
			return f
		}
	}
	var o proto.Opened
	if err := json.Unmarshal(next(proto.TypeOpened).Body, &o); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(o.Features, proto.FeatureSignal) || slices.Contains(o.Features, proto.FeatureForeground) {
		t.Errorf("OPENED features %v: want signal without foreground", o.Features)
	}
	h.send(proto.TypeForeground, proto.Foreground{TerminalID: "s"})
	var fg map[string]any
	json.Unmarshal(next(proto.TypeForegroundInfo).Body, &fg)
	if _, ok := fg["pid"]; ok || fg["process"] != nil || fg["terminalId"] != "s" {
		t.Errorf("FOREGROUND answered %v, want neither pid nor process", fg)
	}
	h.send(proto.TypeSignal, proto.Signal{TerminalID: "s", Signal: "SIGQUIT"})
	var e proto.Error
	json.Unmarshal(next(proto.TypeError).Body, &e)
	if e.TerminalID != "s" || !strings.Contains(e.Message, "not supported on Windows") {
		t.Errorf("SIGQUIT answered %+v, want an ERROR saying it is not supported", e)
	}
	// Wait for the whole tree before ending it.
	for !strings.Contains(vtSeq.ReplaceAllString(out.String(), ""), "TREE-READY") {
		f := h.next(60 * time.Second)
		if f.Type != proto.TypeOutput {
			t.Fatalf("got %v %s before the tree was ready", f.Type, f.Body)
		}
		_, data, _ := proto.ParseData(f.Body)
		out.Write(data)
	}
	before := descendants(t, h.cmd.Process.Pid)
	h.send(proto.TypeSignal, proto.Signal{TerminalID: "s", Signal: "SIGTERM"})
	var x proto.Exit
	json.Unmarshal(next(proto.TypeExit).Body, &x)
	if x.Signal != "SIGTERM" || x.ExitCode == nil || *x.ExitCode != 128+15 {
		t.Errorf("EXIT after SIGTERM: %s, want code 143 signal SIGTERM", exitText(&x))
	}
	if left := survivors(before, 10*time.Second); len(left) > 0 {
		t.Errorf("%d of the %d processes below the sidecar outlived SIGTERM: %v", len(left), len(before), names(left))
	}
}

// TestSidecarKilledLeavesNoProcess: when the sidecar is killed (no
// teardown of its own runs), the kernel closes its handles; the job's
// last handle going kills the child's tree, and the pseudo-console's
// conhost ends with its pipes. Counted from the process table.
func TestSidecarKilledLeavesNoProcess(t *testing.T) {
	h := startHost(t)
	tm := &term{}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "k", Cols: 80, Rows: 24, Cmd: selfPath(t), Env: map[string]string{roleEnv: "tree"}})
	h.collect(map[string]*term{"k": tm}, 60*time.Second, func() bool { return strings.Contains(tm.text(), "TREE-READY") || tm.exit != nil || tm.errMsg != "" }, nil)
	if !strings.Contains(tm.text(), "TREE-READY") {
		t.Fatalf("tree helper said %q (%s)", tm.text(), tm.errMsg)
	}
	before := descendants(t, h.cmd.Process.Pid)
	if len(before) < 3 {
		t.Fatalf("only %d processes below the sidecar: %v", len(before), names(before))
	}
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	left := survivors(before, 10*time.Second)
	if len(left) > 0 {
		t.Errorf("%d of the %d processes below the sidecar outlived its death: %v", len(left), len(before), names(left))
	}
	t.Logf("sidecar killed: %d processes below the sidecar before (%s), %d left", len(before), names(before), len(left))
}

// TestEndOfInputExitsCleanly: on end of input the sidecar ends its
// terminals and exits 0, and nothing below it (the child's tree,
// conhost) outlives it. A clean end says nothing on stderr unless
// -log-exit asks for the reason, as on Unix.
func TestEndOfInputExitsCleanly(t *testing.T) {
	for _, logExit := range []bool{false, true} {
		t.Run(fmt.Sprintf("log-exit=%v", logExit), func(t *testing.T) {
			var args []string
			if logExit {
				args = append(args, "-log-exit")
			}
			h := startHost(t, args...)
			tm := &term{}
			terms := map[string]*term{"s": tm}
			// A child with two children of its own, all running.
			h.send(proto.TypeOpen, proto.Open{TerminalID: "s", Cols: 80, Rows: 24, Cmd: selfPath(t), Env: map[string]string{roleEnv: "tree"}})
			h.collect(terms, 60*time.Second, func() bool { return strings.Contains(tm.text(), "TREE-READY") || tm.exit != nil || tm.errMsg != "" }, nil)
			if !strings.Contains(tm.text(), "TREE-READY") {
				t.Fatalf("tree helper said %q (%s)", tm.text(), tm.errMsg)
			}
			before := descendants(t, h.cmd.Process.Pid)
			h.stdin.Close()
			h.collect(terms, 60*time.Second, exited(tm), nil)
			select {
			case err := <-h.exited:
				if err != nil {
					t.Errorf("sidecar: %v; stderr:\n%s", err, h.stderr)
				}
				h.exited <- err // for the cleanup
			case <-time.After(30 * time.Second):
				t.Fatalf("sidecar still runs after end of input; stderr:\n%s", h.stderr)
			}
			said := strings.Contains(h.stderr.String(), "exiting with status 0: the host closed stdin")
			if said != logExit {
				t.Errorf("with -log-exit=%v the reason was said: %v; stderr:\n%s", logExit, said, h.stderr)
			}
			if !waitGone(t, tm.pid, 10*time.Second) {
				t.Errorf("child %d outlived the sidecar", tm.pid)
			}
			left := survivors(before, 10*time.Second)
			if len(left) > 0 {
				t.Errorf("%d of the %d processes below the sidecar outlived it: %v", len(left), len(before), names(left))
			}
			t.Logf("end of input: %d processes below the sidecar before (%s), %d left", len(before), names(before), len(left))
		})
	}
}

// TestHostClosingStdoutEndsTheSidecar: a host that closes its end of the
// sidecar's stdout while keeping stdin open (it stopped caring, or half
// of it died) ends the sidecar and its terminals, as on Unix, though no
// terminal writes anything that would fail: exit status 1 and the reason
// on stderr, and nothing left below it.
func TestHostClosingStdoutEndsTheSidecar(t *testing.T) {
	path, env := sidecarPath(t)
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	stderr := &lockedBuf{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Our own pipe, read only here: a read left waiting in another
	// goroutine would keep the read end from closing.
	outR, outW := hostPipe(t)
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	exitedCh := make(chan error, 1)
	go func() { exitedCh <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exitedCh:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})

	// A terminal that writes nothing once it runs: a child with two
	// children of its own, all blocked.
	if err := proto.WriteFrame(stdin, proto.TypeOpen, proto.Marshal(proto.Open{TerminalID: "s", Cols: 80, Rows: 24, Cmd: selfPath(t), Env: map[string]string{roleEnv: "tree"}})); err != nil {
		t.Fatal(err)
	}
	frames := make(chan proto.Frame)
	readErr := make(chan error, 1)
	var out bytes.Buffer
	r := proto.NewReader(outR)
	for !strings.Contains(out.String(), "TREE-READY") {
		go func() {
			f, err := r.ReadFrame()
			if err != nil {
				readErr <- err
				return
			}
			frames <- f
		}()
		select {
		case f := <-frames:
			switch f.Type {
			case proto.TypeOutput:
				_, data, _ := proto.ParseData(f.Body)
				out.Write(data)
			case proto.TypeError, proto.TypeExit:
				t.Fatalf("%v %s", f.Type, f.Body)
			}
		case err := <-readErr:
			t.Fatalf("sidecar stdout: %v; stderr:\n%s", err, stderr)
		case <-time.After(60 * time.Second):
			t.Fatalf("the tree helper did not start; output %q, stderr:\n%s", out.String(), stderr)
		}
	}
	before := descendants(t, cmd.Process.Pid)
	// No read of ours is waiting here: the last one returned TREE-READY.
	outR.Close()
	select {
	case err := <-exitedCh:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("sidecar ended with %v, want exit status 1", err)
		}
		exitedCh <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatalf("sidecar still runs 30s after the host closed its end of stdout; stderr:\n%s", stderr)
	}
	if want := "exiting with status 1: the host stopped reading stdout: output stream broken: the host closed its end of stdout"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if left := survivors(before, 10*time.Second); len(left) > 0 {
		t.Errorf("%d of the %d processes below the sidecar outlived it: %v", len(left), len(before), names(left))
	}
}

// hostPipe makes a pipe for a child's stdout as node (libuv) makes one:
// a named pipe whose server end, ours, reads, and whose client end, the
// child's, writes and may read the pipe's attributes (its state), which
// the sidecar asks to learn that the host closed its end.
func hostPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	name, err := windows.UTF16PtrFromString(fmt.Sprintf(`\\.\pipe\ptyplex-test-%d-%d`, os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := windows.CreateNamedPipe(name, windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS, 1, 64<<10, 64<<10, 0, nil)
	if err != nil {
		t.Fatalf("CreateNamedPipe: %v", err)
	}
	cli, err := windows.CreateFile(name, windows.GENERIC_WRITE|windows.FILE_READ_ATTRIBUTES, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		windows.CloseHandle(srv)
		t.Fatalf("open the pipe's client end: %v", err)
	}
	return os.NewFile(uintptr(srv), "host-end"), os.NewFile(uintptr(cli), "sidecar-stdout")
}

// checkFlood verifies that every line of the flood helper arrived, in
// order, by comparing a checksum of the lines found with that of the
// lines written.
func checkFlood(t *testing.T, id string, tm *term) {
	t.Helper()
	want, got := sha256.New(), sha256.New()
	for i := 0; i < floodLines; i++ {
		fmt.Fprintln(want, floodLine(i))
	}
	lines := regexp.MustCompile(`L\d{6} [a-z]{40}`).FindAllString(tm.text(), -1)
	for _, l := range lines {
		fmt.Fprintln(got, l)
	}
	if !bytes.Equal(want.Sum(nil), got.Sum(nil)) {
		t.Errorf("terminal %s: %d lines arrived of %d, checksums differ", id, len(lines), floodLines)
	}
	if tm.exit == nil || tm.exit.ExitCode == nil || *tm.exit.ExitCode != 0 {
		t.Errorf("terminal %s: EXIT %+v", id, tm.exit)
	}
}

// TestSixteenFloodsWithCredit floods 16 terminals at once, each opened
// with a small credit that the host grants again only once it was used
// up: no byte may be lost, and no terminal may ever send more OUTPUT than
// it was granted.
func TestSixteenFloodsWithCredit(t *testing.T) {
	const n, window = 16, 16 << 10
	h := startHost(t)
	terms := map[string]*term{}
	granted, used := map[string]uint64{}, map[string]uint64{}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("f%02d", i)
		terms[id] = &term{}
		c := uint64(window)
		granted[id] = c
		h.send(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 120, Rows: 40, Cmd: selfPath(t), Env: map[string]string{roleEnv: "flood"}, Credit: &c})
	}
	start := time.Now()
	h.collect(terms, 240*time.Second, func() bool {
		for _, tm := range terms {
			if tm.exit == nil && tm.errMsg == "" {
				return false
			}
		}
		return true
	}, func(id string, k int) {
		used[id] += uint64(k)
		if used[id] > granted[id] {
			t.Fatalf("terminal %s sent %d bytes on %d of credit", id, used[id], granted[id])
		}
		if used[id] == granted[id] {
			granted[id] += window
			h.send(proto.TypeCredit, proto.Credit{TerminalID: id, Bytes: window})
		}
	})
	total := 0
	for id, tm := range terms {
		if tm.errMsg != "" {
			t.Fatalf("terminal %s: %s", id, tm.errMsg)
		}
		checkFlood(t, id, tm)
		total += tm.out.Len()
	}
	t.Logf("16 terminals: %d bytes of OUTPUT in %v", total, time.Since(start).Round(time.Millisecond))
}

// TestGoClient runs the Go client against the sidecar it finds itself:
// ptyplex-sidecar.exe beside the running program, then on PATH.
func TestGoClient(t *testing.T) {
	path, env := sidecarPath(t)
	if len(env) > 0 {
		t.Skip("PTYPLEX_SIDECAR not set: the client needs a real ptyplex-sidecar.exe to find")
	}
	dir := filepath.Dir(selfPath(t))
	beside := filepath.Join(dir, "ptyplex-sidecar.exe")
	copied := false
	if _, err := os.Stat(beside); err != nil {
		if err := copyFile(path, beside); err != nil {
			t.Fatal(err)
		}
		copied = true
	}
	found, err := client.FindSidecar()
	if err != nil || !strings.EqualFold(found, beside) {
		t.Errorf("FindSidecar beside the program: %q, %v; want %q", found, err, beside)
	}
	if copied {
		// Gone from beside the program: PATH is next.
		os.Remove(beside)
		onPath, err := os.MkdirTemp("", "onpath")
		if err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(onPath, "ptyplex-sidecar.exe")
		t.Cleanup(func() { os.Remove(exe); os.Remove(onPath) })
		if err := copyFile(path, exe); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", onPath+string(os.PathListSeparator)+os.Getenv("PATH"))
		found, err = client.FindSidecar()
		if err != nil || !strings.EqualFold(found, exe) {
			t.Fatalf("FindSidecar on PATH: %q, %v; want %q", found, err, exe)
		}
	}
	c, err := client.Start(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	term, err := c.Open(ctx, client.OpenOptions{Cmd: "cmd.exe", Args: []string{"/c", "echo via-go-client& exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(term)
	st, err := term.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "via-go-client") || st.Code != 3 {
		t.Errorf("output %q, status %v", out, st)
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func exitText(e *proto.Exit) string {
	if e == nil {
		return "none"
	}
	code := "null"
	if e.ExitCode != nil {
		code = strconv.Itoa(*e.ExitCode)
	}
	return fmt.Sprintf("code %s signal %q", code, e.Signal)
}

// blockForever is what a helper that runs until it is killed does. Not
// select{}: with no other goroutine the runtime would call that a
// deadlock and end the process.
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// TestThroughputAgainstPlainConPTY is the Windows row of the benchmark
// (make bench-windows): one terminal's flood through the sidecar, frames
// and all, against a plain read loop on a pseudo-console made by the
// same backend, rounds alternating, in the same run. Under Wine the
// ratio is what means something; the absolute figures are Wine's.
func TestThroughputAgainstPlainConPTY(t *testing.T) {
	if os.Getenv("PTYPLEX_BENCH") == "" {
		t.Skip("a measurement: set PTYPLEX_BENCH=1 (make bench-windows)")
	}
	const lines, rounds = "40000", 5
	env := map[string]string{roleEnv: "flood", "FLOOD_LINES": lines}
	plain := func() float64 {
		start := time.Now()
		p, err := ptyhost.Start(ptyhost.Config{Cmd: selfPath(t), Env: env, Cols: 120, Rows: 40})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		buf := make([]byte, 64<<10)
		n := 0
		for {
			k, err := p.Read(buf)
			n += k
			if err != nil {
				break
			}
		}
		return float64(n) / time.Since(start).Seconds()
	}
	sidecar := func() float64 {
		h := startHost(t)
		tm := &term{}
		start := time.Now()
		h.send(proto.TypeOpen, proto.Open{TerminalID: "b", Cols: 120, Rows: 40, Cmd: selfPath(t), Env: env})
		h.collect(map[string]*term{"b": tm}, 5*time.Minute, exited(tm), nil)
		if tm.errMsg != "" {
			t.Fatal(tm.errMsg)
		}
		return float64(tm.out.Len()) / time.Since(start).Seconds()
	}
	var ps, ss []float64
	for i := 0; i < rounds; i++ {
		ps = append(ps, plain())
		ss = append(ss, sidecar())
	}
	median := func(v []float64) float64 { sort.Float64s(v); return v[len(v)/2] }
	mp, ms := median(ps), median(ss)
	t.Logf("flood of %s lines, median of %d alternating rounds: plain ConPTY read loop %.1f MB/s, through ptyplex-sidecar %.1f MB/s: ratio %.2f (sidecar/plain)",
		lines, rounds, mp/1e6, ms/1e6, ms/mp)
}

// OPEN's commandLine reaches the child as it is, which is how a host gives
// cmd.exe /c a command that holds quotes (through args they came out as
// \"); HELLO and OPENED list the feature, and beside args it is refused.
func TestCommandLineOnWindows(t *testing.T) {
	h := startHost(t)
	h.send(proto.TypeHello, proto.Hello{Protocol: proto.ProtocolVersion, Features: []string{proto.FeatureHello}})
	f := h.next(60 * time.Second)
	hello, err := proto.ParseHello(f.Body)
	if f.Type != proto.TypeHelloReply || err != nil || !hello.Has(proto.FeatureCommandLine) {
		t.Errorf("HELLO answered %v %s (%v): want the commandLine feature", f.Type, f.Body, err)
	}
	h.send(proto.TypeOpen, proto.Open{TerminalID: "both", Cols: 80, Rows: 24, Cmd: "cmd.exe", Args: []string{"/c"}, CommandLine: "echo x"})
	h.send(proto.TypeOpen, proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "cmd.exe", CommandLine: `/c echo "a b"& exit 3`})
	// Answered in order: the refusal at once, then the spawn's OPENED.
	f = h.next(60 * time.Second)
	if want := "malformed OPEN: commandLine and args cannot both be given"; f.Type != proto.TypeError || !strings.Contains(string(f.Body), want) {
		t.Errorf("OPEN with both answered %v %s, want ERROR %q", f.Type, f.Body, want)
	}
	f = h.next(60 * time.Second)
	var o proto.Opened
	if f.Type != proto.TypeOpened || json.Unmarshal(f.Body, &o) != nil || !slices.Contains(o.Features, proto.FeatureCommandLine) {
		t.Fatalf("OPEN with commandLine answered %v %s, want OPENED listing commandLine", f.Type, f.Body)
	}
	tm := &term{}
	h.collect(map[string]*term{"c": tm}, 60*time.Second, exited(tm), nil)
	if tm.errMsg != "" {
		t.Fatal(tm.errMsg)
	}
	if !regexp.MustCompile(`(?m)^"a b" ?\r?$`).MatchString(tm.text()) {
		t.Errorf("cmd.exe /c echo \"a b\" printed %q, want the quotes intact", tm.text())
	}
	if tm.exit.ExitCode == nil || *tm.exit.ExitCode != 3 {
		t.Errorf("EXIT %s, want code 3", exitText(tm.exit))
	}
}
