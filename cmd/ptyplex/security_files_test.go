//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plant is one thing an attacker leaves under the name we are told to
// write, in a world-writable sticky directory (/tmp).
type plant struct {
	name   string
	script string // run as the attacker in the shared directory; $VICTIM is set
	reason string // what the refusal must say
}

var plants = []plant{
	{"symlink to our file", `ln -s "$VICTIM" out`, "it is a symbolic link"},
	{"their own file, mode 0666", `touch out && chmod 666 out`, "it belongs to user"},
	{"FIFO with no reader", `mkfifo -m 666 out`, "it is a FIFO"},
}

// TestPTYDumpRefusesPlantedFiles is the planted-file attack on
// `start --pty-dump`: nothing the attacker planted is written, the victim
// file is untouched, start fails at once (not after its 15 s readiness
// timeout, as it did on a FIFO) and says why.
func TestPTYDumpRefusesPlantedFiles(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			dir := sharedDir(t, os.ModeSticky|0o777)
			victim := privateFile(t, "precious\n")
			attacker.run(t, "cd "+dir+" && VICTIM="+victim+" && "+p.script)
			out := filepath.Join(dir, "out")
			began := time.Now()
			r := ptyplex(t, "", "start", "--pty-dump", out, "--", "sh", "-c", "echo SECRET; exec cat")
			if r.code == 0 {
				stopStarted(t, r.stdout)
				t.Fatalf("start wrote its output to a planted %s: %v", p.name, r)
			}
			want := "refusing to write to " + out + ": " + p.reason
			if !strings.Contains(r.stderr, want) {
				t.Errorf("start's error does not say %q:\n%v", want, r)
			}
			if took := time.Since(began); took >= readyTimeout {
				t.Errorf("start took %v: it waited for the daemon's readiness timeout", took)
			}
			assertFile(t, victim, "precious\n")
		})
	}
}

// A FIFO the attacker is reading from opens without blocking, so only the
// check on the open descriptor can refuse it; the reader gets nothing.
func TestPTYDumpRefusesFIFOWithReader(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	dir := sharedDir(t, os.ModeSticky|0o777)
	out := filepath.Join(dir, "out")
	attacker.run(t, "mkfifo -m 666 "+out)
	// The attacker holds the FIFO open for reading and copies what comes.
	reader := attacker.command("cat", out)
	stolen, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Process.Kill(); reader.Wait() })
	// Our own writer end makes sure the reader has opened the FIFO (open
	// for writing blocks until a reader is there) and keeps it from
	// seeing end of file when start gives up.
	holder, err := os.OpenFile(out, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := ptyplex(t, "", "start", "--pty-dump", out, "--", "sh", "-c", "echo SECRET; exec cat")
	if r.code == 0 {
		stopStarted(t, r.stdout)
		t.Fatalf("start wrote its output into a FIFO another user reads: %v", r)
	}
	if want := "refusing to write to " + out + ": it is a FIFO"; !strings.Contains(r.stderr, want) {
		t.Errorf("start's error does not say %q:\n%v", want, r)
	}
	holder.Close() // now the reader sees end of file, with what it got
	got, _ := bufio.NewReader(stolen).ReadString(0)
	if got != "" {
		t.Errorf("the attacker read %q from the FIFO", got)
	}
}

// A hard link to one of our files has the right owner and type; the link
// count gives it away. (With fs.protected_hardlinks on, as on this
// machine, only the owner can make one, so we make it ourselves: the
// attack needs protected_hardlinks off.)
func TestPTYDumpRefusesHardLink(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, os.ModeSticky|0o777)
	victim := privateFile(t, "precious\n")
	out := filepath.Join(dir, "out")
	if err := os.Link(victim, out); err != nil {
		t.Fatal(err)
	}
	r := ptyplex(t, "", "start", "--pty-dump", out, "--", "sh", "-c", "echo SECRET; exec cat")
	if r.code == 0 {
		stopStarted(t, r.stdout)
		t.Fatalf("start appended to a hard link of another file: %v", r)
	}
	if want := "it has 2 hard links"; !strings.Contains(r.stderr, want) {
		t.Errorf("start's error does not say %q:\n%v", want, r)
	}
	assertFile(t, victim, "precious\n")
}

// A new dump file is created private (0600) and ours; an existing private
// file of ours is appended to.
func TestPTYDumpCreatesPrivateFile(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, os.ModeSticky|0o777)
	out := filepath.Join(dir, "out")
	s := start(t, "--pty-dump", out, "--", "sh", "-c", "echo FIRST; exec cat")
	s.waitText("FIRST")
	fi, err := os.Lstat(out)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode() != 0o600 || int(st.Uid) != os.Geteuid() {
		t.Errorf("new dump file: mode %v uid %d, want -rw------- and uid %d", fi.Mode(), st.Uid, os.Geteuid())
	}
	s2 := start(t, "--pty-dump", out, "--", "sh", "-c", "echo SECOND; exec cat")
	s2.waitText("SECOND")
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "FIRST") || !strings.Contains(string(b), "SECOND") {
		t.Errorf("dump after two sessions: %q", b)
	}
}

// `ptyplex mcp --log` opens its file the same way.
func TestMCPLogRefusesPlantedFiles(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			dir := sharedDir(t, os.ModeSticky|0o777)
			victim := privateFile(t, "precious\n")
			attacker.run(t, "cd "+dir+" && VICTIM="+victim+" && "+p.script)
			out := filepath.Join(dir, "out")
			r := ptyplex(t, "", "mcp", "--log", out) // stdin at EOF: the server would end at once
			if r.code == 0 {
				t.Fatalf("mcp logged to a planted %s: %v", p.name, r)
			}
			if want := "refusing to write to " + out + ": " + p.reason; !strings.Contains(r.stderr, want) {
				t.Errorf("mcp's error does not say %q:\n%v", want, r)
			}
			assertFile(t, victim, "precious\n")
		})
	}
	// And a fresh log file is created 0600.
	out := filepath.Join(sharedDir(t, os.ModeSticky|0o777), "log")
	if r := ptyplex(t, "", "mcp", "--log", out); r.code != 0 {
		t.Fatalf("mcp with a fresh log file: %v", r)
	}
	if fi, err := os.Lstat(out); err != nil || fi.Mode() != 0o600 {
		t.Errorf("new log file: %v, %v; want mode -rw-------", fi, err)
	}
}

func assertFile(t testing.TB, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s now holds %q (%v), want %q", path, b, err, want)
	}
}

// stopStarted stops a daemon that start reported although the test
// expected it to refuse, so a failing test leaves nothing behind.
func stopStarted(t testing.TB, startOut string) {
	for _, line := range strings.Split(startOut, "\n") {
		if sock, ok := strings.CutPrefix(line, "Socket: "); ok {
			exec.Command(bin, "stop", "--socket", sock).Run()
		}
	}
}
