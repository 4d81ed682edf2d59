//go:build unix

package persist_test

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
)

// --list prints the terminals for people, --stop ends them and the server.
func TestListAndStop(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "shell\x1b[2J", Cols: 100, Rows: 30, Cmd: "/bin/sh", Args: []string{"-c", "echo hi; exec sleep 1000"}})
	h.WaitOutput("shell\x1b[2J", "hi\r\n")
	h.Open(proto.Open{TerminalID: "done", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "exit 3"}})
	h.WaitControl(proto.TypeExit, "done")
	out, err := s.run("--list")
	if err != nil {
		t.Fatalf("--list: %v\n%s", err, out)
	}
	// The id is quoted: its escape sequence must not reach the screen.
	if !regexp.MustCompile(`(?m)^"shell\\x1b\[2J"\s+\d+\s+100x30\s+4\s+0\s+ring\s+attached\s+/bin/sh -c 'echo hi; exec sleep 1000'$`).MatchString(out) {
		t.Fatalf("--list printed:\n%s", out)
	}
	if strings.Contains(out, "done") {
		t.Fatalf("--list shows a terminal whose EXIT was read:\n%s", out)
	}
	pid := 0
	if l := list(t, h); len(l.Terminals) == 1 {
		pid = l.Terminals[0].PID
	}
	if out, err := s.run("--stop"); err != nil {
		t.Fatalf("--stop: %v\n%s", err, out)
	}
	// The bridge ends with the server, and the child is gone.
	h.MustUntil("the end of the stream", func(sn hosttest.Snapshot) bool { return sn.EOF != nil })
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("pid %d still runs after --stop", pid)
	}
	if out, err := s.run("--list"); err == nil || !strings.Contains(out, `no persistent sidecar "t" is running`) {
		t.Fatalf("--list after --stop: %v\n%s", err, out)
	}
}

// Bridges started at the same moment end up with one server between them.
func TestConcurrentStartsMakeOneServer(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const n = 6
	hosts := make([]*hosttest.Host, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := s.host()
			mu.Lock()
			hosts[i] = h
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, h := range hosts {
		h.Open(proto.Open{TerminalID: "t" + strconv.Itoa(i), Cols: 80, Rows: 24, Cmd: "/bin/cat"})
		h.WaitControl(proto.TypeOpened, "t"+strconv.Itoa(i))
	}
	// One server sees every terminal.
	if l := list(t, hosts[0]); len(l.Terminals) != n {
		t.Fatalf("the first host's server has %d terminals, want %d: %+v", len(l.Terminals), n, l)
	}
}

// Another user cannot reach the server: the directory keeps them out,
// and the server itself refuses a peer of another uid even when the
// directory and socket are opened up to everyone.
func TestOtherUserRefused(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that acts as a second user")
		}
		t.Fatal("this test acts as a second local user and must run as root (CI does); set PTYPLEX_NO_ROOT_TESTS=1 to skip it")
	}
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "mine", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "mine")
	uid, gid := otherUser(t)
	runtimeDir := strings.TrimPrefix(s.env[len(s.env)-1], "PTYPLEX_RUNTIME_DIR=")
	sock := filepath.Join(runtimeDir, "sidecar", "t.sock")
	as := func(prog string, args ...string) (string, error) {
		cmd := exec.Command(prog, args...)
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "PTYPLEX_RUNTIME_DIR=" + runtimeDir}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := as(sidecarBin, "--persist", "t", "--list"); err == nil || strings.Contains(out, "mine") {
		t.Fatalf("another user listed our terminals: %v\n%s", err, out)
	}
	// Open the way by hand (as root), to reach the server's own check;
	// closed again before the server is stopped.
	for _, p := range []string{filepath.Dir(runtimeDir), runtimeDir, filepath.Dir(sock)} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o700) })
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	script := `import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(bytes([3,0,0,0,0x20])+b"{}")
b=b""
while True:
    d=s.recv(4096)
    if not d: break
    b+=d
sys.stdout.write(repr(b))`
	out, err := as("/usr/bin/python3", "-c", script, sock)
	if err != nil {
		t.Fatalf("connecting as another user: %v\n%s", err, out)
	}
	if !strings.Contains(out, "refused: this persistent sidecar serves uid 0 only") || strings.Contains(out, "mine") {
		t.Fatalf("another uid got: %s", out)
	}
	if l := list(t, h); len(l.Terminals) != 1 || !l.Terminals[0].Attached {
		t.Fatalf("after the refused connection: %+v", l)
	}
}

// otherUser creates a throwaway system user, deleted when the test ends.
func otherUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	name := "ptyp" + hex.EncodeToString(b[:])
	if out, err := testproc.Admin("useradd", "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v\n%s", err, out)
	}
	t.Cleanup(func() { testproc.Admin("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseUint(u.Uid, 10, 32)
	g, _ := strconv.ParseUint(u.Gid, 10, 32)
	return uint32(id), uint32(g)
}

// STOP ends the terminals, and their holder reads each one's EXIT, after
// all of its output, before the connection closes: one out of credit as
// well, since a stop lifts every gate. (The connections used to be closed
// as soon as the children were reaped, before the EXITs were written.)
func TestStopWritesEveryExitFirst(t *testing.T) {
	t.Parallel()
	for round := 0; round < 4; round++ {
		s := newServer(t)
		h := s.host()
		ids := []string{"a", "b", "c"}
		for _, id := range ids[:2] {
			h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo up; exec sleep 1000"}})
			h.WaitOutput(id, "up\r\n")
		}
		credit := uint64(4)
		h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo 0123456789; exec sleep 1000"}, Credit: &credit})
		h.WaitOutput("c", "0123")
		h.SendJSON(proto.TypeStop, struct{}{})
		sn := h.MustUntil("the end of the stream", func(sn hosttest.Snapshot) bool { return sn.EOF != nil })
		for _, id := range ids {
			cs := sn.Controls(id)
			if len(cs) == 0 || cs[len(cs)-1].Type != proto.TypeExit {
				t.Fatalf("round %d: terminal %s: no EXIT before the connection closed:\n%s", round, id, hosttest.Describe(sn))
			}
		}
		if got := sn.Output("c"); got != "0123456789\r\n" {
			t.Fatalf("round %d: the terminal out of credit got %q before its EXIT", round, got)
		}
	}
}

// A STOP whose body is not what a host sends as one (bytes gone astray)
// is refused with an ERROR, and the server and its terminals go on; it
// used to stop the server whatever the body was.
func TestStopWithAMalformedBodyStopsNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo up; exec sleep 1000"}})
	h.WaitOutput("a", "up\r\n")
	if err := h.Send(proto.TypeStop, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	h.MustUntil("an ERROR about the STOP", func(sn hosttest.Snapshot) bool {
		for _, f := range sn.Frames {
			if f.Type == proto.TypeError && strings.Contains(string(f.Body), "malformed STOP") {
				return true
			}
		}
		return false
	})
	l := list(t, h)
	if len(l.Terminals) != 1 || l.Terminals[0].TerminalID != "a" || l.Terminals[0].Exited {
		t.Fatalf("after a malformed STOP the server lists %+v, want terminal a running", l.Terminals)
	}
}

// --stop ends a server whose host stopped reading (a hung link that is
// not closed) with two flooding terminals: such a holder keeps its
// terminals' readers in a write, so their children are never reaped, and
// it is shut down as a takeover shuts it down. (The server waited for
// the first terminal until its 10 s bound and for the second for ever:
// the bound was a channel that delivers one value.)
func TestStopEndsAServerWithAHungHost(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	list(t, h) // the server is up
	hung, err := net.Dial("unix", s.dir+"/sidecar/"+s.name+".sock")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	for _, id := range []string{"f1", "f2"} {
		open := proto.Marshal(map[string]any{"terminalId": id, "cols": 80, "rows": 24, "cmd": "yes", "journal": 256 << 10})
		if _, err := hung.Write(proto.AppendFrame(nil, proto.TypeOpen, open)); err != nil {
			t.Fatal(err)
		}
	}
	waitWriteStuck(t, h, "f1")
	waitWriteStuck(t, h, "f2")
	start := time.Now()
	if out, err := s.run("--stop"); err != nil {
		t.Fatalf("--stop: %v\n%s", err, out)
	}
	// Well under the server's 10 s bound on the reaping, which it no
	// longer waits out.
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("--stop took %v with a hung host", took)
	}
	if !strings.Contains(s.log(), "while the server stops: its connection is shut down") {
		t.Fatalf("the server's log does not say it shut the hung host down:\n%s", s.log())
	}
}

// Server flags given to a bridge when the server runs already do not
// apply; the bridge says so on stderr rather than leave the user
// believing, say, that --journal-dir keeps their output on disk.
func TestBridgeSaysServerFlagsDidNotApply(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	first := s.host()
	if list(t, first); strings.Contains(first.Stderr(), "did not apply") {
		t.Fatalf("the bridge that started the server complained:\n%s", first.Stderr())
	}
	dir := filepath.Join(t.TempDir(), "journals")
	second := s.host("--journal-dir", dir, "--keep-exited", "1s")
	list(t, second)
	// The bridge says it on stderr, which the host reads on its own
	// (nothing orders that line with the frames): wait for it.
	second.WaitStderr(regexp.MustCompile(`--journal-dir, --keep-exited did not apply`))
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("%s was made by a bridge whose server ran already", dir)
	}
}

// A server that cannot start says why through the bridge that started it,
// not only in its log.
func TestBridgeSaysWhyTheServerDidNotStart(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sidecarBin, "--persist", s.name, "--journal-dir", filepath.Join(file, "j"))
	cmd.Env = s.env
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "failed to start") || !strings.Contains(string(out), "not a directory") {
		t.Fatalf("bridge to a server with a --journal-dir under a file: %v\n%s", err, out)
	}
}

// --stop exits once the server's process has ended, as the docs say
// ("once the server has ended every terminal and gone"): its lock is
// free then, so a bridge started at once starts a new server, and the
// journal directory has no writer left. Before, it returned when the
// server closed its connection, a moment before the process ended: the
// lock was still held after about one --stop in three.
func TestStopReturnsOnceTheServerIsGone(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	lockPath := filepath.Join(s.dir, "sidecar", s.name+".lock")
	for i := range 20 {
		h := s.host()
		h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo up; exec sleep 100"}})
		h.WaitOutput("a", "up\r\n")
		if out, err := s.run("--stop"); err != nil {
			t.Fatalf("--stop: %v\n%s", err, out)
		}
		lock, err := os.Open(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		lock.Close()
		if err != nil {
			t.Fatalf("round %d: the server's lock is still held once --stop returned: %v", i, err)
		}
		h.WaitExit(hosttest.Timeout)
	}
}
