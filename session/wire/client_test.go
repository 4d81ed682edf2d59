//go:build unix

package wire

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// serveOnce listens on a fresh socket and hands the first connection to
// serve; it returns the socket path.
func serveOnce(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wire")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	return sock
}

// A daemon that reads the request and hangs up gives ErrNoAnswer, which
// callers recognise without reading the message.
func TestCallNoAnswer(t *testing.T) {
	sock := serveOnce(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
	})
	_, err := Call(sock, map[string]any{"type": "STATUS"})
	if !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("Call to a daemon that hangs up: %v, want ErrNoAnswer", err)
	}
	if want := "daemon at " + sock + " closed the connection without answering"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}

// An answer, even a cut-off last line, is not ErrNoAnswer; an error
// answer becomes a DaemonError.
func TestCallDataAnswers(t *testing.T) {
	sock := serveOnce(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		c.Write([]byte(`{"status":"error","error":"Process already dead"}`))
	})
	err := CallData(sock, map[string]any{"type": "KILL"}, nil)
	var de DaemonError
	if !errors.As(err, &de) || de.Text != "Process already dead" || errors.Is(err, ErrNoAnswer) {
		t.Fatalf("error answer: %v", err)
	}
}
