//go:build unix

package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
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
