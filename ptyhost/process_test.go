//go:build unix

package ptyhost

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"golang.org/x/sys/unix"
)

// readAll reads the PTY until EOF.
func readAll(t *testing.T, p *Process) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := p.Read(buf)
		b.Write(buf[:n])
		if err == io.EOF {
			return b.String()
		}
		require.NoError(t, err)
	}
}

func run(t *testing.T, cfg Config) (string, Status) {
	t.Helper()
	p, err := Start(cfg)
	require.NoError(t, err)
	defer p.Close()
	out := readAll(t, p)
	require.NoError(t, p.WaitExit())
	st, err := p.Reap()
	require.NoError(t, err)
	return out, st
}

func TestStartRunsChildInPTY(t *testing.T) {
	out, st := run(t, Config{Cmd: "sh", Args: []string{"-c", "stty size; echo $TERM; exit 3"}, Cols: 90, Rows: 33})
	assert.Equal(t, "33 90\r\nxterm-256color\r\n", out)
	assert.Equal(t, Status{Code: 3}, st)
	assert.Equal(t, "", st.SignalName())
}

func TestStatusOfSignalDeath(t *testing.T) {
	_, st := run(t, Config{Cmd: "sh", Args: []string{"-c", "kill -INT $$"}, Cols: 80, Rows: 24})
	assert.Equal(t, 130, st.Code)
	assert.Equal(t, "SIGINT", st.SignalName())
}

func TestStartErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Cmd: "ptyplex-surely-missing"}, "not found in $PATH"},
		{Config{Cmd: file}, "permission denied"},
		{Config{Cmd: "/"}, "is a directory"},
		{Config{Cmd: "sh", Dir: file}, "not a directory"},
		{Config{Cmd: "sh", Dir: "/no/such/dir"}, "no such file"},
		{Config{Cmd: ""}, "empty"},
		// A Unix child takes an argument vector: a Windows command line
		// is refused, not dropped (sh would start with no arguments).
		{Config{Cmd: "sh", CmdLine: `-c "exit 3"`}, "a command line (CmdLine) is only for Windows: give Args"},
	}
	for _, c := range cases {
		_, err := Start(c.cfg)
		require.Error(t, err, "%+v", c.cfg)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestResizeAndSize(t *testing.T) {
	p, err := Start(Config{Cmd: "cat", Cols: 10, Rows: 5})
	require.NoError(t, err)
	defer func() {
		p.SignalGroup(syscall.SIGKILL)
		p.WaitExit()
		p.Reap()
		p.Close()
	}()
	cols, rows, err := p.Size()
	require.NoError(t, err)
	assert.Equal(t, [2]int{10, 5}, [2]int{cols, rows})
	require.NoError(t, p.Resize(0, 70000))
	cols, rows, _ = p.Size()
	assert.Equal(t, [2]int{1, 65535}, [2]int{cols, rows})
	tio, err := p.Termios()
	require.NoError(t, err)
	assert.NotZero(t, tio.Lflag&syscall.ICANON)
}

// TestResizePixels: the size in pixels reaches the winsize, and Resize
// sets it back to 0 (unknown).
func TestResizePixels(t *testing.T) {
	p, err := Start(Config{Cmd: "cat", Cols: 10, Rows: 5})
	require.NoError(t, err)
	defer func() {
		p.SignalGroup(syscall.SIGKILL)
		p.WaitExit()
		p.Reap()
		p.Close()
	}()
	winsize := func() unix.Winsize {
		var ws *unix.Winsize
		require.NoError(t, control(p.master, func(fd int) (err error) { ws, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); return err }))
		return *ws
	}
	require.NoError(t, p.ResizePixels(100, 30, 1000, 70000))
	assert.Equal(t, unix.Winsize{Row: 30, Col: 100, Xpixel: 1000, Ypixel: 65535}, winsize())
	require.NoError(t, p.Resize(90, 20))
	assert.Equal(t, unix.Winsize{Row: 20, Col: 90}, winsize())
}

func TestKillSessionEndsJobsInOtherGroups(t *testing.T) {
	// set -m gives the background job a process group of its own.
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "set -m; sleep 1000 & echo $!; wait"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	buf := make([]byte, 64)
	n, err := p.Read(buf)
	require.NoError(t, err)
	line := strings.TrimSpace(string(buf[:n]))
	require.NotEmpty(t, line)

	assert.GreaterOrEqual(t, p.KillSession(syscall.SIGKILL, false), 1)
	// The shell's wait returns once the job died.
	done := make(chan error, 1)
	go func() { done <- p.WaitExit() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the shell did not see its job die")
	}
	st, err := p.Reap()
	require.NoError(t, err)
	assert.Equal(t, 0, st.Code)
}

func TestEnvironMergesAndOrders(t *testing.T) {
	t.Setenv("PTYPLEX_TEST_A", "ours")
	t.Setenv("TERM", "dumb")
	c := Config{Env: map[string]string{"PTYPLEX_TEST_B": "theirs"}}
	env := strings.Join(c.environ(), "\n")
	assert.Contains(t, env, "PTYPLEX_TEST_A=ours")
	assert.Contains(t, env, "PTYPLEX_TEST_B=theirs")
	assert.Contains(t, env, "TERM=xterm-256color")
	assert.NotContains(t, env, "TERM=dumb")
	c.Env["TERM"] = "vt100"
	assert.Contains(t, strings.Join(c.environ(), "\n"), "TERM=vt100")

	// An override takes the inherited variable's place; every name
	// appears once.
	t.Setenv("PTYPLEX_TEST_C", "inherited")
	c.Env["PTYPLEX_TEST_C"] = "overridden"
	names := map[string]int{}
	for _, kv := range c.environ() {
		k, _, _ := strings.Cut(kv, "=")
		names[k]++
		if k == "PTYPLEX_TEST_C" {
			assert.Equal(t, "PTYPLEX_TEST_C=overridden", kv)
		}
	}
	for k, n := range names {
		assert.Equal(t, 1, n, "variable %s", k)
	}
	assert.Equal(t, 1, names["PTYPLEX_TEST_C"])
}

// BaseEnv replaces our environment as the base, whole: nothing of ours
// that it lacks gets through, and Env and the TERM default apply over it.
func TestEnvironOverBaseEnv(t *testing.T) {
	t.Setenv("PTYPLEX_TEST_OURS", "ours")
	c := Config{BaseEnv: []string{"PTYPLEX_TEST_BASE=base", "SHADOWED=old", "TERM=dumb", "PATH=/base/bin"},
		Env: map[string]string{"SHADOWED": "new"}}
	env := c.environ()
	assert.Equal(t, []string{"PTYPLEX_TEST_BASE=base", "SHADOWED=new", "TERM=xterm-256color", "PATH=/base/bin"}, env)
	// An empty base is a base too (not ours).
	c = Config{BaseEnv: []string{}}
	assert.Equal(t, []string{"TERM=xterm-256color"}, c.environ())
}

// TestRelativeCommandIsFoundInDir: a command with a slash but no leading
// one is where the child looks for it, relative to its working directory.
func TestRelativeCommandIsFoundInDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, testproc.WriteExecutable(filepath.Join(dir, "bin", "hello.sh"), []byte("#!/bin/sh\necho hello from $(pwd)\n"), 0o755))
	out, st := run(t, Config{Cmd: "./bin/hello.sh", Dir: dir, Cols: 80, Rows: 24})
	assert.Equal(t, "hello from "+dir+"\r\n", out)
	assert.Equal(t, 0, st.Code)
	// A relative PATH entry is relative to the same directory.
	out, _ = run(t, Config{Cmd: "hello.sh", Dir: dir, Env: map[string]string{"PATH": "bin:/usr/bin:/bin"}, Cols: 80, Rows: 24})
	assert.Equal(t, "hello from "+dir+"\r\n", out)
	_, err := Start(Config{Cmd: "./bin/hello.sh", Cols: 80, Rows: 24}) // not in our own directory
	assert.Error(t, err)
}

// TestPathLookupAsExecvp: a bare name is looked up as execvp does in the
// child's environment: without PATH along the default path (an npm host's
// explicit env without PATH), with an empty PATH in the current
// directory, and with a PATH only there.
func TestPathLookupAsExecvp(t *testing.T) {
	out, st := run(t, Config{Cmd: "sh", Args: []string{"-c", "echo ran"}, BaseEnv: []string{}, Env: map[string]string{"HOME": "/"}, Cols: 80, Rows: 24})
	assert.Equal(t, "ran\r\n", out)
	assert.Equal(t, 0, st.Code)

	dir := t.TempDir()
	require.NoError(t, testproc.WriteExecutable(filepath.Join(dir, "hello.sh"), []byte("#!/bin/sh\necho hello\n"), 0o755))
	out, _ = run(t, Config{Cmd: "hello.sh", Dir: dir, BaseEnv: []string{}, Env: map[string]string{"PATH": ""}, Cols: 80, Rows: 24})
	assert.Equal(t, "hello\r\n", out)

	_, err := Start(Config{Cmd: "sh", BaseEnv: []string{"PATH=/nonexistent"}, Cols: 80, Rows: 24})
	assert.ErrorContains(t, err, "not found in $PATH")
}

// TestScriptWithoutInterpreterRunsUnderSh: an executable file without a
// #! line, which execve refuses (ENOEXEC), runs under /bin/sh as execvp
// runs it, named by a path or found in PATH, with its arguments.
func TestScriptWithoutInterpreterRunsUnderSh(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "noshebang")
	require.NoError(t, testproc.WriteExecutable(file, []byte("echo \"ran $0 [$1] [$2]\"\nexit 4\n"), 0o755))
	out, st := run(t, Config{Cmd: file, Args: []string{"a b", "c"}, Cols: 80, Rows: 24})
	assert.Equal(t, "ran "+file+" [a b] [c]\r\n", out)
	assert.Equal(t, 4, st.Code)
	out, _ = run(t, Config{Cmd: "noshebang", Env: map[string]string{"PATH": "/nonexistent:" + dir}, Cols: 80, Rows: 24})
	assert.Equal(t, "ran "+file+" [] []\r\n", out)
}

// TestNodePtyTermios: Config.NodePtyTermios gives node-pty's attributes,
// and with them IXANY: after ^S the next key restarts output, where the
// kernel's defaults (kept without it) wait for ^Q.
func TestNodePtyTermios(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; read x; echo after"}, Cols: 80, Rows: 24, NodePtyTermios: true, UTF8: true})
	require.NoError(t, err)
	tio, err := p.Termios()
	require.NoError(t, err)
	assert.Equal(t, uint64(unix.ICRNL|unix.IXON|unix.IXANY|unix.IMAXBEL|unix.BRKINT|iutf8), uint64(tio.Iflag))
	assert.NotZero(t, uint64(tio.Cflag)&unix.HUPCL)
	assert.Equal(t, [2]uint8{0xff, 0xff}, [2]uint8{tio.Cc[unix.VEOL], tio.Cc[unix.VEOL2]})
	assert.Equal(t, uint8(3), tio.Cc[unix.VINTR])
	var out strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "ready") {
		n, err := p.Read(buf)
		require.NoError(t, err)
		out.Write(buf[:n])
	}
	// ^S stops output; the g of go restarts it.
	_, err = p.Write([]byte("\x13go\n"))
	require.NoError(t, err)
	require.NoError(t, p.SetReadDeadline(time.Now().Add(10*time.Second)))
	assert.Contains(t, readAll(t, p), "after")
	require.NoError(t, p.WaitExit())
	p.Reap()
	p.Close()

	p, err = Start(Config{Cmd: "true", Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	tio, err = p.Termios()
	require.NoError(t, err)
	assert.Zero(t, uint64(tio.Iflag)&(unix.IXANY|unix.IMAXBEL|unix.BRKINT), "the kernel's defaults without it")
	p.WaitExit()
	p.Reap()
}

// TestUTF8SetsIUTF8: Config.UTF8 turns IUTF8 on, and so a cooked-mode
// backspace erases a whole character: typing "aé", backspace, newline
// leaves "a", not "a" and the first byte of é.
func TestUTF8SetsIUTF8(t *testing.T) {
	if iutf8 == 0 {
		t.Skip("this system has no IUTF8")
	}
	for _, utf8 := range []bool{false, true} {
		p, err := Start(Config{Cmd: "sh", Args: []string{"-c", `stty -echo; echo ready; read x; printf '%s' "$x" | od -An -tx1`}, Cols: 80, Rows: 24, UTF8: utf8})
		require.NoError(t, err)
		tio, err := p.Termios()
		require.NoError(t, err)
		assert.Equal(t, utf8, uint64(tio.Iflag)&uint64(iutf8) != 0, "IUTF8 with UTF8=%v", utf8)
		var out strings.Builder
		buf := make([]byte, 4096)
		for !strings.Contains(out.String(), "ready") {
			n, err := p.Read(buf)
			require.NoError(t, err)
			out.Write(buf[:n])
		}
		_, err = p.Write([]byte("a\xc3\xa9\x7f\n"))
		require.NoError(t, err)
		rest := readAll(t, p)
		want := " 61 c3" // without IUTF8 the backspace takes only the last byte
		if utf8 {
			want = " 61\r\n"
		}
		assert.Contains(t, rest, want, "UTF8=%v: %q", utf8, rest)
		require.NoError(t, p.WaitExit())
		p.Reap()
		p.Close()
	}
}
