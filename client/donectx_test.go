//go:build linux

package client

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
)

// fakePeer is the other end of a Connect: the test reads the frames the
// client writes and writes the peer's.
type fakePeer struct {
	c      *Client
	toHost *io.PipeWriter
	frames chan proto.Frame
}

func newFakePeer(t *testing.T) *fakePeer {
	hostR, peerW := io.Pipe()
	peerR, hostW := io.Pipe()
	p := &fakePeer{c: Connect(hostR, hostW), toHost: peerW, frames: make(chan proto.Frame, 16)}
	go func() {
		defer close(p.frames)
		r := proto.NewReader(peerR)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				return
			}
			p.frames <- f
		}
	}()
	t.Cleanup(func() {
		peerW.Close()
		peerR.Close()
		p.c.Close()
	})
	return p
}

// next returns the next frame the client wrote.
func (p *fakePeer) next(t *testing.T) proto.Frame {
	t.Helper()
	select {
	case f, ok := <-p.frames:
		require.True(t, ok, "the client's stream ended")
		return f
	case <-time.After(waitBound):
		t.Fatal("no frame from the client in time")
	}
	return proto.Frame{}
}

// A request made with a context that has ended already reaches nothing:
// STOP, REVIVE and UPGRADE act even when nobody waits for their answer,
// and used to be sent all the same (Stop ended the server and every
// terminal while it reported the cancellation).
func TestEndedContextSendsNothing(t *testing.T) {
	p := newFakePeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{ctx, expired} {
		_, err := p.c.Hello(ctx)
		require.ErrorIs(t, err, ctx.Err(), "Hello")
		_, err = p.c.List(ctx)
		require.ErrorIs(t, err, ctx.Err(), "List")
		_, err = p.c.Revive(ctx, "dead")
		require.ErrorIs(t, err, ctx.Err(), "Revive")
		_, err = p.c.Upgrade(ctx, "/bin/true", "v")
		require.ErrorIs(t, err, ctx.Err(), "Upgrade")
		_, err = p.c.Attach(ctx, "t", 0)
		require.ErrorIs(t, err, ctx.Err(), "Attach")
		_, err = p.c.Open(ctx, OpenOptions{Cmd: "true"})
		require.ErrorIs(t, err, ctx.Err(), "Open")
		require.ErrorIs(t, p.c.Stop(ctx), ctx.Err(), "Stop")
	}
	// Nothing was written before this frame, and the client is not
	// closing: a Stop refused at once left it usable.
	require.NoError(t, p.c.stream().Send(proto.AppendFrame(nil, proto.TypePing, []byte(`{"seq":1}`))))
	f := p.next(t)
	require.Equal(t, proto.TypePing, f.Type, "first frame written: %s %s", f.Type, f.Body)
	_, _, err := p.c.register("open terminal", OpenOptions{ID: "still-open"})
	require.NoError(t, err, "the client after a refused Stop")
}

// A handshake the caller cancels says so, not that the sidecar is too old
// to answer HELLO (with the advice to install another).
func TestCanceledHelloIsNotNoHello(t *testing.T) {
	p := newFakePeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := p.c.Hello(ctx)
		res <- err
	}()
	require.Equal(t, proto.TypeHello, p.next(t).Type)
	cancel()
	err := <-res
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.Is(err, ErrNoHello), "%v", err)
	require.NotContains(t, err.Error(), "install")
}

// A Revive whose caller gave up waiting leaves the terminal, revived
// after all, running unheld: DETACH, not the CLOSE an abandoned Open
// gets, since the program is the old session's.
func TestAbandonedReviveIsDetached(t *testing.T) {
	p := newFakePeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := p.c.Revive(ctx, "old")
		res <- err
	}()
	require.Equal(t, proto.TypeRevive, p.next(t).Type)
	cancel()
	require.ErrorIs(t, <-res, context.Canceled)
	_, err := p.toHost.Write(proto.AppendFrame(nil, proto.TypeOpened, []byte(`{"terminalId":"old","pid":4242}`)))
	require.NoError(t, err)
	f := p.next(t)
	require.Equal(t, proto.TypeDetach, f.Type, "after the late OPENED: %s %s", f.Type, f.Body)
	require.Contains(t, string(f.Body), `"old"`)
}

// With a real server: a Revive with an ended context leaves the dead
// terminal dead, its output still there to attach or revive. It used to
// be revived and, abandoned, closed at once: the old session was gone.
func TestRevivedNotWithEndedContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "rc")
	opts := Options{SidecarPath: sidecarBin, Env: env, Args: []string{"--journal-dir", t.TempDir() + "/j"}}
	c1, err := Persistent("rc", opts)
	require.NoError(t, err)
	defer c1.Close()
	term, err := c1.Open(ctx, OpenOptions{ID: "old", Cmd: "/bin/sh", Args: []string{"-c", "echo precious; exec cat"}})
	require.NoError(t, err)
	out := collect(term)
	out.waitText(t, "precious")
	require.NoError(t, syscall.Kill(serverPid(t, env, "rc"), syscall.SIGKILL))
	term.Wait()

	c2, err := Persistent("rc", opts)
	require.NoError(t, err)
	defer c2.Close()
	dead := func() bool {
		for _, e := range mustList(t, ctx, c2) {
			if e.TerminalID == "old" && e.Dead {
				return true
			}
		}
		return false
	}
	require.Eventually(t, dead, waitBound, 20*time.Millisecond)
	ended, cancelEnded := context.WithCancel(context.Background())
	cancelEnded()
	_, err = c2.Revive(ended, "old")
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, dead(), "the dead terminal after a Revive with an ended context")
	t2, err := c2.Attach(ctx, "old", 0)
	require.NoError(t, err)
	got, _ := io.ReadAll(t2)
	require.True(t, strings.Contains(string(got), "precious"), "%q", got)
}

// Connect on a persistent server's socket (as `ptyplex-sidecar --list`
// and `ptyplex attach` do): Close ends the connection cleanly. It closed
// the socket whole, so reading failed with "use of closed network
// connection": Close returned that as ErrSidecarGone, and a terminal
// still live ended with ErrSidecarGone rather than ErrClientClosed.
func TestConnectOnSocketClosesCleanly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "sock")
	c1, err := Persistent("sock", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	require.NoError(t, err)
	defer c1.Close()
	_, err = c1.Open(ctx, OpenOptions{ID: "s", Cmd: "sleep", Args: []string{"1000"}})
	require.NoError(t, err)
	require.NoError(t, c1.Close())

	nc := dialServer(t, env, "sock")
	c := Connect(nc, nc)
	term, err := c.Attach(ctx, "s", 0)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Err())
	_, err = term.Wait()
	require.ErrorIs(t, err, ErrClientClosed)
	require.False(t, errors.Is(err, ErrSidecarGone), "Wait: %v", err)
	// The socket is closed whole once the server has ended it.
	_, err = nc.Write([]byte{0})
	require.ErrorIs(t, err, net.ErrClosed)
}

// Close of a Connect whose other end never ends its output returns once
// its bound passed, having closed both ends. It waited for ever: the
// kill that bounds Close does nothing for a stream it did not start.
func TestConnectCloseIsBounded(t *testing.T) {
	hostR, _ := io.Pipe() // the peer never writes nor closes
	peerR, hostW := io.Pipe()
	go io.Copy(io.Discard, peerR)
	c := Connect(hostR, hostW)
	c.closeBound = 50 * time.Millisecond
	res := make(chan error, 1)
	go func() { res <- c.Close() }()
	select {
	case err := <-res:
		require.ErrorIs(t, err, ErrSidecarGone)
	case <-time.After(waitBound):
		t.Fatal("Close did not return")
	}
}

// dialServer connects to persistent server name's socket, as
// persist.Dial does.
func dialServer(t *testing.T, env []string, name string) *net.UnixConn {
	t.Helper()
	dir := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PTYPLEX_RUNTIME_DIR="); ok {
			dir = v
		}
	}
	nc, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filepath.Join(dir, "sidecar", name+".sock"), Net: "unix"})
	require.NoError(t, err)
	return nc
}

// A List waiting on a sidecar that does not answer it (a plain one) ends
// with ErrClientClosed when Close ends the connection. It returned
// "list terminals: %!w(<nil>)", an error that wrapped nothing.
func TestListEndsWithClose(t *testing.T) {
	c := startClient(t)
	res := make(chan error, 1)
	go func() {
		_, err := c.List(context.Background())
		res <- err
	}()
	require.Eventually(t, func() bool {
		c.persist.mu.Lock()
		defer c.persist.mu.Unlock()
		return c.persist.listed != nil
	}, waitBound, time.Millisecond)
	require.NoError(t, c.Close())
	select {
	case err := <-res:
		require.ErrorIs(t, err, ErrClientClosed)
		require.NotContains(t, err.Error(), "%!")
	case <-time.After(waitBound):
		t.Fatal("List did not end with the connection")
	}
}

// A sidecar that ended on its own (SIGTERM: every EXIT, then exit 0)
// before Close was called stays an error: Close returns it and Err keeps
// saying it. Close made the end look like its own: both became nil.
func TestEndBeforeCloseStaysAnError(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
	require.NoError(t, c.stream().Process().Signal(syscall.SIGTERM))
	select {
	case <-c.Done():
	case <-time.After(waitBound):
		t.Fatal("the client did not end with its sidecar")
	}
	require.ErrorIs(t, c.Err(), ErrSidecarGone)
	require.ErrorIs(t, c.Close(), ErrSidecarGone)
	require.ErrorIs(t, c.Err(), ErrSidecarGone, "Err after Close")
	_, err := term.Wait()
	require.NoError(t, err, "the terminal ended with its EXIT")
}

// Detach of a terminal that has finished fails and sends nothing: it
// returned nil, and its DETACH named an id this connection no longer
// held (which another host may have opened again since).
func TestDetachOfEndedTerminalFails(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "true"})
	<-term.Done()
	err := term.Detach()
	require.Error(t, err)
	require.Contains(t, err.Error(), "exited")
}

// A handshake that Close interrupts says the client was closed, not that
// the sidecar went away (ErrSidecarGone).
func TestHelloInterruptedByClose(t *testing.T) {
	p := newFakePeer(t)
	res := make(chan error, 1)
	go func() {
		_, err := p.c.Hello(context.Background())
		res <- err
	}()
	require.Equal(t, proto.TypeHello, p.next(t).Type)
	closed := make(chan error, 1)
	go func() { closed <- p.c.Close() }()
	require.Eventually(t, p.c.stopping, waitBound, time.Millisecond)
	// The peer ends its output at the end of its input, as a sidecar does.
	p.toHost.Close()
	err := <-res
	require.ErrorIs(t, err, ErrClientClosed)
	require.False(t, errors.Is(err, ErrSidecarGone), "%v", err)
	require.NoError(t, <-closed)
}
