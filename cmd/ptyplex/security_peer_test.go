//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDaemon is a local attacker serving a socket: it listens on a socket
// path before the real daemon does and answers like one, keeping what
// clients send it.
const fakeDaemon = `
import os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    got = b""
    try:
        while not got.endswith(b"\n"):
            b = c.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    print("got", got.decode(errors="replace").strip(), flush=True)
    try:
        c.sendall(b'{"status":"ok","data":{"screen":"Password for root: \\n","cursor":{"row":0,"col":19},"size":{"rows":24,"cols":80},"from":1,"to":1,"scrollback_available":0,"scrollback_capacity":0}}\n')
    except OSError:
        pass
    c.close()
`

// TestClientRefusesForeignDaemon: another user's listener at the socket
// path gets neither our input nor our attention. Before the check,
// output printed its fake screen and input --text sent it the secret.
func TestClientRefusesForeignDaemon(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	sock := filepath.Join(sharedDir(t, os.ModeSticky|0o777), "session.sock")
	py := attacker.command("python3", "-c", fakeDaemon, sock)
	out, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatalf("python3 (the attacker): %v", err)
	}
	t.Cleanup(func() { py.Process.Kill(); py.Wait() })
	br := bufio.NewReader(out)
	if line, err := br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("fake daemon did not start: %q %v", line, err)
	}

	for _, args := range [][]string{
		{"output", "--socket", sock},
		{"input", "--socket", sock, "--text", "hunter2\r"},
		{"status", "--socket", sock},
	} {
		r := ptyplex(t, "", args...)
		if r.code == 0 || strings.Contains(r.stdout, "Password for") {
			t.Errorf("ptyplex %s talked to another user's daemon: %v", args[0], r)
		}
		want := "refusing to talk to " + sock + ": it is served by user " + attacker.name
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ptyplex %s does not say %q:\n%v", args[0], want, r)
		}
	}
	// Every connection reached the fake daemon empty-handed.
	py.Process.Kill()
	rest, _ := io.ReadAll(br)
	for _, line := range strings.Split(strings.TrimSpace(string(rest)), "\n") {
		if line = strings.TrimSpace(line); line != "got" && line != "" {
			t.Errorf("the fake daemon received %q", line)
		}
	}
}
