package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"golang.org/x/sys/unix"
)

// A host may give the sidecar one socket as both stdin and stdout, as
// socat's EXEC, inetd and systemd's Accept=yes do. A host that lets the
// output pile up in that socket for a while must lose nothing: before,
// making stdin non-blocking made stdout non-blocking too, the first write
// to the full socket failed with EAGAIN, and the sidecar killed every
// terminal and exited with status 1 ("the host stopped reading stdout").
func TestOneSocketForStdinAndStdout(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	host := os.NewFile(uintptr(fds[0]), "host")
	side := os.NewFile(uintptr(fds[1]), "sidecar")
	defer host.Close()
	defer side.Close()

	cmd := exec.Command(sidecar)
	cmd.Stdin, cmd.Stdout = side, side
	dir := t.TempDir()
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd.Stderr = errFile
	stderr := func() string {
		b, _ := os.ReadFile(errFile.Name())
		return string(b)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()

	// 2 MiB: far more than the socket and the PTY hold.
	const size = 2 << 20
	open, _ := json.Marshal(map[string]any{"terminalId": "flood", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", "head -c 2097152 /dev/zero | tr '\\0' x; echo END"}})
	if _, err := host.Write(rawFrame(0x01, open)); err != nil {
		t.Fatal(err)
	}

	// Wait, reading nothing, until the socket is full: its unread bytes
	// reach its send buffer, so the sidecar's next write finds no room
	// (and, before, failed at once).
	sndbuf, err := unix.GetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the sidecar exited (%v) while the host was not reading:\n%s", err, stderr())
		default:
		}
		queued, err := unix.IoctlGetInt(fds[1], unix.SIOCOUTQ)
		if err != nil {
			t.Fatal(err)
		}
		if queued >= sndbuf {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d bytes unread in a %d byte socket; stderr:\n%s", queued, sndbuf, stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The host reads again: every byte, then EXIT, and a clean end once it
	// closes its half of the socket.
	side.Close()
	r := bufio.NewReader(host)
	var out []byte
	var exit *struct {
		ExitCode *int `json:"exitCode"`
	}
	for exit == nil {
		typ, body := readRawFrame(t, r, stderr)
		switch typ {
		case 0x82:
			n := int(binary.LittleEndian.Uint16(body))
			if id := string(body[2 : 2+n]); id != "flood" {
				t.Fatalf("OUTPUT for %q", id)
			}
			out = append(out, body[2+n:]...)
		case 0x83:
			exit = new(struct {
				ExitCode *int `json:"exitCode"`
			})
			if err := json.Unmarshal(body, exit); err != nil {
				t.Fatal(err)
			}
		case 0x84:
			t.Fatalf("ERROR %s", body)
		}
	}
	if want := strings.Repeat("x", size) + "END\r\n"; string(out) != want {
		t.Errorf("OUTPUT: %d bytes, want the %d bytes written", len(out), len(want))
	}
	if exit.ExitCode == nil || *exit.ExitCode != 0 {
		t.Errorf("EXIT %+v, want exit code 0", exit)
	}
	if err := unix.Shutdown(fds[0], unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Errorf("after EXIT: %q, %v", rest, err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("the sidecar: %v\n%s", err, stderr())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sidecar did not exit at the end of its input")
	}
}
