//go:build linux

package mcpserver

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A hold is refused when the socket is served by another process than the
// pid `start` reported, and a hold on a process that exits reports it and
// signals nobody.
func TestHoldDaemon(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	other := exec.Command("sleep", "1000")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()

	if _, err := holdDaemon(other.Process.Pid, sock); err == nil || !strings.Contains(err.Error(), "is served by pid") {
		t.Errorf("held pid %d for a socket that pid %d serves: %v", other.Process.Pid, os.Getpid(), err)
	}

	d, err := holdDaemon(os.Getpid(), sock)
	if err != nil {
		t.Fatalf("hold on the socket's own server: %v", err)
	}
	if d.exited() {
		t.Errorf("a running process is reported exited")
	}
	d.release()
	if !d.exited() || d.signal(syscall.SIGTERM) != errDaemonGone {
		t.Errorf("a released hold still signals")
	}

	// A hold on a process that then exits.
	h, err := openHold(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	gone := &daemon{pid: other.Process.Pid, h: h}
	defer gone.release()
	if gone.waitExit(10 * time.Millisecond) {
		t.Fatalf("sleep 1000 reported exited")
	}
	other.Process.Kill()
	if !gone.waitExit(10 * time.Second) {
		t.Fatalf("no exit seen through the hold")
	}
	other.Wait() // reaped: the pid is free for anyone now
	if err := gone.signal(syscall.SIGTERM); err != errDaemonGone {
		t.Errorf("signal through the hold of an exited process: %v, want errDaemonGone", err)
	}
}
