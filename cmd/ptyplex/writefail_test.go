//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// stderrWatch collects a command's stderr lines as they come; it never
// holds the writer back.
type stderrWatch struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced on each line
	ended bool
	pw    *os.File
}

// watchStderr gives cmd a pipe as its stderr; call started once cmd ran.
func watchStderr(t *testing.T, cmd *exec.Cmd) *stderrWatch {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	w := &stderrWatch{more: make(chan struct{}), pw: pw}
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			close(w.more)
			w.more = make(chan struct{})
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.ended = true
		close(w.more)
		w.mu.Unlock()
	}()
	return w
}

// started closes our copy of the pipe's write end, so the reader ends with
// the command.
func (w *stderrWatch) started() { w.pw.Close() }

// waitFor returns the first stderr line that contains text.
func (w *stderrWatch) waitFor(t *testing.T, text string) string {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		w.mu.Lock()
		lines, ended, more := w.lines, w.ended, w.more
		w.mu.Unlock()
		for _, l := range lines {
			if strings.Contains(l, text) {
				return l
			}
		}
		if ended {
			t.Fatalf("stderr ended without %q; it had %q", text, lines)
		}
		select {
		case <-more:
		case <-time.After(time.Until(end)):
			t.Fatalf("no stderr line with %q within %v; it had %q", text, deadline, lines)
		}
	}
}

// TestPTYDumpStopsAtFailedWrite gives the daemon a file size limit of
// 1024 bytes (the same failure as a full disk: the write is cut short,
// then fails) and more output than that. The dump must end as a clean
// prefix of the output, the daemon's stderr (--no-daemon) and status must
// say so, and once writing could succeed again (the file truncated, as
// when a full disk gets room back) nothing more may go in: before, the
// failure was silent and the dump went on after it, leaving a hole.
func TestPTYDumpStopsAtFailedWrite(t *testing.T) {
	t.Parallel()
	dump := t.TempDir() + "/d.bin"
	script := `head -c 600 /dev/zero | tr '\0' A; echo; read x; ` +
		`head -c 600 /dev/zero | tr '\0' B; echo BEND; read x; echo CCC; exec cat`
	// ulimit -f counts 512-byte blocks.
	cmd := exec.Command("sh", "-c", `ulimit -f 2 && exec "$0" "$@"`, bin,
		"start", "--no-daemon", "--pty-dump", dump, "--", "sh", "-c", script)
	stderr := watchStderr(t, cmd)
	s := startCmd(t, cmd)
	stderr.started()
	s.waitText("AAAA")
	s.input("1\n")
	s.waitText("BEND")

	line := stderr.waitFor(t, "--pty-dump")
	if !strings.Contains(line, "stopped after 1024 bytes") || !strings.Contains(line, "file too large") {
		t.Errorf("daemon's stderr: %q, want it to say the dump stopped after 1024 bytes, and why", line)
	}
	want := "PTY dump: stopped after 1024 bytes: write " + dump + ": file too large\n"
	if st := s.ok("status"); !strings.HasSuffix(st, want) {
		t.Errorf("status:\n%s\nwant it to end with %q", st, want)
	}
	m := rawCall(t, s.sock, `{"type":"STATUS"}`)
	ds, _ := m["data"].(map[string]any)["pty_dump_stopped"].(map[string]any)
	if ds == nil || ds["bytes"] != float64(1024) || !strings.Contains(ds["error"].(string), "file too large") {
		t.Errorf("STATUS answer %v, want pty_dump_stopped with bytes 1024 and the error", m)
	}

	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.Repeat("A", 600) + "\r\n"
	if len(b) != 1024 || !bytes.HasPrefix(b, []byte(prefix)) || b[len(b)-1] != 'B' {
		t.Errorf("dump (%d bytes) is not the output's first 1024 bytes: %q", len(b), b)
	}

	// Room again: a dump that went on would now write the later output.
	if err := os.Truncate(dump, 0); err != nil {
		t.Fatal(err)
	}
	s.input("2\n")
	s.waitText("CCC") // the reader writes the dump before the screen
	if b, _ := os.ReadFile(dump); len(b) != 0 {
		t.Errorf("the dump went on after its failed write: %q", b)
	}
	if st := s.ok("status"); !strings.HasSuffix(st, want) {
		t.Errorf("status after more output:\n%s\nwant it to end with %q", st, want)
	}
}

// ptyplexFsize runs ptyplex with a file size limit of blocks 512-byte
// blocks: a write past it fails (EFBIG) as one on a full disk does.
func ptyplexFsize(t *testing.T, blocks int, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -f "$0" && exec "$@"`, strconv.Itoa(blocks), bin}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader(stdin)
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ptyplex %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// TestOutputPNGFailedWriteKeepsFile writes a screenshot that does not fit
// (a file size limit of 512 bytes, the failure of a full disk): the
// existing image must stay as it was, a new name must not get a fragment,
// no temporary file may be left, and the error must name the file once.
// Before, the file was truncated and rewritten in place, and the error
// read "write F: write F: file too large".
func TestOutputPNGFailedWriteKeepsFile(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", colourProgram)
	s.waitText("ready")
	dir := t.TempDir()
	path := filepath.Join(dir, "screen.png")
	s.ok("output", "--png", path)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(good) <= 512 {
		t.Fatalf("the PNG has %d bytes: too few for a 512-byte limit to cut it", len(good))
	}

	r := ptyplexFsize(t, 1, "", "output", "--socket", s.sock, "--png", path)
	want := "Error: write " + path + ": file too large (the existing file is left as it was)\n"
	if r.code != exitFail || r.stderr != want {
		t.Errorf("output --png past the limit: %v\nwant exit 1 and stderr %q", r, want)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
		t.Errorf("the existing PNG changed: %d bytes, was %d", len(b), len(good))
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the existing PNG: %v, %v", st.Mode(), err)
	}

	fresh := filepath.Join(dir, "new.png")
	r = ptyplexFsize(t, 1, "", "output", "--socket", s.sock, "--png", fresh)
	if want := "Error: write " + fresh + ": file too large\n"; r.code != exitFail || r.stderr != want {
		t.Errorf("output --png to a new file past the limit: %v\nwant exit 1 and stderr %q", r, want)
	}
	if _, err := os.Lstat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed write left %s: %v", fresh, err)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		var l []string
		for _, n := range names {
			l = append(l, n.Name())
		}
		t.Errorf("the directory holds %q, want only screen.png", l)
	}
}

// TestStartSaysRegistryFailed starts a session whose record cannot be
// written (a file size limit of 0: the write fails as on a full disk).
// The session still runs, but start must say on stderr that list will not
// show it, and why; before, it said nothing and list showed no session.
func TestStartSaysRegistryFailed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"daemon", "no-daemon", "scanned"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			reg := base
			env := append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+reg)
			args := []string{"-c", `ulimit -f 0 && exec "$@"`, "sh", bin, "start"}
			say := "'ptyplex list' will not show it"
			switch mode {
			case "no-daemon":
				args = append(args, "--no-daemon")
			case "scanned":
				// Without PTYPLEX_RUNTIME_DIR list also finds the
				// auto-generated socket in /tmp/interminai-*.
				reg = filepath.Join(base, "ptyplex")
				env = append(withoutEnv(os.Environ(), "PTYPLEX_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+base)
				say = "'ptyplex list' will show it only by its socket, without its command"
			}
			cmd := exec.Command("sh", append(args, "--", "sh", "-c", "echo RUNNING; exec cat")...)
			cmd.Env = env
			stderr := watchStderr(t, cmd)
			s := startCmd(t, cmd)
			stderr.started()
			line := stderr.waitFor(t, "list")
			want := "ptyplex: the session runs, but " + say + ": session registry: cannot write this session's record in " + reg + ": file too large"
			if line != want {
				t.Errorf("start's stderr: %q\nwant %q", line, want)
			}
			s.waitText("RUNNING")
			if names, _ := os.ReadDir(reg); len(names) != 0 {
				t.Errorf("the registry holds %v after the failed write", names)
			}
		})
	}
}

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestMCPLogWriteFailure runs the MCP server with a --log file it cannot
// write (a file size limit of 0, the failure of a full disk) and two
// input lines it refuses, each logged. Stderr must say once that logging
// to the file failed and why, and carry both log lines instead; before,
// the file stayed empty and nothing said so.
func TestMCPLogWriteFailure(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "mcp.log")
	r := ptyplexFsize(t, 0, "not json one\nnot json two\n", "mcp", "--log", logPath)
	if r.code != 0 {
		t.Fatalf("mcp: %v", r)
	}
	notice := "ptyplex mcp: logging to " + logPath + " failed: file too large; this and later log lines go to stderr instead\n"
	if n := strings.Count(r.stderr, "logging to"); n != 1 || !strings.HasPrefix(r.stderr, notice) {
		t.Errorf("stderr:\n%s\nwant it to begin with %q, once", r.stderr, notice)
	}
	for _, l := range []string{`line="not json one"`, `line="not json two"`} {
		if !strings.Contains(r.stderr, l) {
			t.Errorf("stderr lacks the log line with %s:\n%s", l, r.stderr)
		}
	}
	if b, err := os.ReadFile(logPath); err != nil || len(b) != 0 {
		t.Errorf("the log file: %q, %v", b, err)
	}
	if strings.Contains(r.stdout, "level=") {
		t.Errorf("a log line reached stdout, the protocol's:\n%s", r.stdout)
	}
}
