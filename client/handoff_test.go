//go:build linux

package client

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// HandOff gives a real persistent server a host's two pipes: the server
// then reads the host's OPEN from one and writes OPENED and the output to
// the other, and when the host closes its end, Wait hears HOST_ENDED with
// a clean status.
func TestHandOffToPersistentServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "h")
	c, err := Persistent("h", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.List(ctx); err != nil { // the server is up
		t.Fatal(err)
	}
	var runtime string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PTYPLEX_RUNTIME_DIR="); ok {
			runtime = v
		}
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filepath.Join(runtime, "sidecar", "h.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	inR, inW, err := os.Pipe() // host to server
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // server to host
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	h, left, err := HandOff(conn, int(inR.Fd()), int(outW.Fd()), HandOffOptions{Version: "test"})
	if err != nil || h == nil {
		t.Fatalf("HandOff: %v, %v (left %q)", h, err, left)
	}
	// The server has its own copies now; the host keeps only its ends.
	inR.Close()
	outW.Close()
	if err := proto.WriteFrame(inW, proto.TypeOpen, proto.Marshal(proto.Open{TerminalID: "x", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo handed-over"}})); err != nil {
		t.Fatal(err)
	}
	r := proto.NewReader(outR)
	var out bytes.Buffer
	var opened, exited bool
	outR.SetReadDeadline(time.Now().Add(20 * time.Second))
	for !exited {
		f, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("reading the host's stdout: %v (output so far %q)", err, out.String())
		}
		switch f.Type {
		case proto.TypeOpened:
			opened = true
		case proto.TypeOutput:
			_, d, err := proto.ParseData(f.Body)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(d)
		case proto.TypeExit:
			exited = true
		}
	}
	if !opened || !strings.Contains(out.String(), "handed-over") {
		t.Fatalf("opened %v, output %q", opened, out.String())
	}
	inW.Close() // the host ends its input
	done := make(chan struct{})
	var ended proto.HostEnded
	var werr error
	go func() {
		defer close(done)
		ended, werr = h.Wait()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Wait did not return after the host closed its input")
	}
	if werr != nil || ended.Code != 0 {
		t.Fatalf("Wait: %+v, %v; want code 0", ended, werr)
	}
}

// A server that does not offer the handoff (an older one), or refuses
// it, leaves the descriptors with the caller, and what it sent past its
// answers is handed back for the copy that follows.
func TestHandOffDeclined(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(t *testing.T, r *proto.Reader, w net.Conn)
	}{
		{"no handoff in HELLO", func(t *testing.T, r *proto.Reader, w net.Conn) {
			proto.WriteFrame(w, proto.TypeHelloReply, proto.Marshal(proto.SidecarHello("old", []string{proto.FeatureHello})))
		}},
		{"HANDOFF refused", func(t *testing.T, r *proto.Reader, w net.Conn) {
			proto.WriteFrame(w, proto.TypeHelloReply, proto.Marshal(proto.SidecarHello("new", []string{proto.FeatureHello, proto.FeatureHandoff})))
			if f, err := r.ReadFrame(); err != nil || f.Type != proto.TypeHandoff {
				t.Errorf("want HANDOFF, got %v %v", f.Type, err)
				return
			}
			proto.WriteFrame(w, proto.TypeError, []byte(`{"message":"HANDOFF refused: test"}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds, err := sockpair()
			if err != nil {
				t.Fatal(err)
			}
			c, srv := fds[0], fds[1]
			defer c.Close()
			defer srv.Close()
			go func() {
				r := proto.NewReader(srv)
				if f, err := r.ReadFrame(); err != nil || f.Type != proto.TypeHello {
					t.Errorf("want HELLO, got %v %v", f.Type, err)
					return
				}
				tc.serve(t, r, srv)
				// A frame right behind the answer: the host's, for the copy.
				proto.WriteFrame(srv, proto.TypePong, []byte(`{"n":1}`))
			}()
			inR, inW, _ := os.Pipe()
			defer inR.Close()
			defer inW.Close()
			h, left, err := HandOff(c, int(inR.Fd()), int(inW.Fd()), HandOffOptions{Version: "test", Bound: 10 * time.Second})
			if err != nil || h != nil {
				t.Fatalf("HandOff: %v, %v; want declined", h, err)
			}
			// What came past the answer is either handed back or still
			// on the connection: together they are the PONG, whole.
			rest := append([]byte(nil), left...)
			want := proto.AppendFrame(nil, proto.TypePong, []byte(`{"n":1}`))
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			buf := make([]byte, 64)
			for len(rest) < len(want) {
				n, err := c.Read(buf)
				if err != nil {
					t.Fatalf("after the answer: %q, %v", rest, err)
				}
				rest = append(rest, buf[:n]...)
			}
			if !bytes.Equal(rest, want) {
				t.Fatalf("bytes past the answer %q, want %q", rest, want)
			}
		})
	}
}

// sockpair is a connected pair of Unix stream sockets as *net.UnixConn.
func sockpair() ([2]*net.UnixConn, error) {
	var out [2]*net.UnixConn
	dir, err := os.MkdirTemp("", "handoff")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "s"), Net: "unix"})
	if err != nil {
		return out, err
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		return out, err
	}
	s, err := ln.AcceptUnix()
	if err != nil {
		c.Close()
		return out, err
	}
	return [2]*net.UnixConn{c, s}, nil
}
