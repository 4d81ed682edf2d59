//go:build unix

package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
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

// A host may hand over a stdin pipe that is non-blocking already (one of
// its own event loop's, say). Before, the sidecar's first read of it failed
// with EAGAIN ("reading frames: read /dev/stdin: resource temporarily
// unavailable"), and it exited with status 1 before it read a frame.
func TestNonBlockingStdin(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	if err := unix.SetNonblock(p[0], true); err != nil {
		t.Fatal(err)
	}
	in := os.NewFile(uintptr(p[0]), "stdin")
	host := os.NewFile(uintptr(p[1]), "host")
	defer host.Close()

	cmd := exec.Command(sidecar)
	cmd.Stdin = in
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := captureStderr(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()

	open, _ := json.Marshal(map[string]any{"terminalId": "a", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", "echo hello"}})
	if _, err := host.Write(rawFrame(0x01, open)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var got []byte
	for {
		typ, body := readRawFrame(t, r, stderr)
		if typ == 0x82 {
			n := int(binary.LittleEndian.Uint16(body))
			got = append(got, body[2+n:]...)
			continue
		}
		if typ == 0x84 {
			t.Fatalf("ERROR %s", body)
		}
		if typ == 0x83 {
			if string(body) != `{"exitCode":0,"terminalId":"a"}` {
				t.Errorf("EXIT %s", body)
			}
			break
		}
	}
	if string(got) != "hello\r\n" {
		t.Errorf("OUTPUT %q, want %q", got, "hello\r\n")
	}
	host.Close()
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

// A host that closes its end of our stdout (it died, or dropped the pipe)
// ends the sidecar and its terminals at once, though nothing is written:
// before, the sidecar heard of it only at its next write, which idle
// terminals never make (nor a sidecar holding back the host's frames for
// a child that does not read), and the sidecar and its programs outlived
// their host.
func TestHostClosingStdoutEndsTheSidecar(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sidecar)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := captureStderr(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()

	open, _ := json.Marshal(map[string]any{"terminalId": "idle", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", "exec sleep 1000"}})
	if _, err := in.Write(rawFrame(0x01, open)); err != nil {
		t.Fatal(err)
	}
	typ, body := readRawFrame(t, bufio.NewReader(out), stderr)
	var opened struct{ Pid int }
	if err := json.Unmarshal(body, &opened); typ != 0x81 || err != nil || opened.Pid <= 0 {
		t.Fatalf("frame %#x %s, want OPENED with a pid", typ, body)
	}
	out.Close() // the host's end; its stdin stays open

	select {
	case err := <-exited:
		exited <- err
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("the sidecar ended with %v, want exit status 1; stderr:\n%s", err, stderr())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the sidecar still runs 30 s after its host closed stdout; stderr:\n%s", stderr())
	}
	if !strings.Contains(stderr(), "the host closed its end of stdout") {
		t.Errorf("stderr does not say why:\n%s", stderr())
	}
	if !hosttest.WaitGone(opened.Pid, 10*time.Second) {
		t.Errorf("the terminal's program (pid %d) outlived the sidecar", opened.Pid)
	}
}

// rawFrame encodes one frame as the seed protocol lays it out.
func rawFrame(typ byte, body []byte) []byte {
	f := binary.LittleEndian.AppendUint32(nil, uint32(1+len(body)))
	return append(append(f, typ), body...)
}

// readRawFrame reads one frame; stderr is the sidecar's, for the failure.
func readRawFrame(t *testing.T, r io.Reader, stderr func() string) (byte, []byte) {
	t.Helper()
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		t.Fatalf("reading a frame header: %v; the sidecar's stderr:\n%s", err, stderr())
	}
	body := make([]byte, binary.LittleEndian.Uint32(head[:4])-1)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("reading a frame body: %v; the sidecar's stderr:\n%s", err, stderr())
	}
	return head[4], body
}

// captureStderr sends cmd's stderr to a file and returns a function that
// reads what it holds so far.
func captureStderr(t *testing.T, cmd *exec.Cmd) func() string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd.Stderr = f
	return func() string {
		b, _ := os.ReadFile(f.Name())
		return string(b)
	}
}
