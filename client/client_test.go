package client

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

const waitBound = 10 * time.Second

func startClient(t *testing.T) *Client {
	t.Helper()
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: testLog{t}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// testLog shows the sidecar's diagnostics in the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("sidecar: %s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

func open(t *testing.T, c *Client, o OpenOptions) *Terminal {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	term, err := c.Open(ctx, o)
	require.NoError(t, err)
	return term
}

// output reads a terminal to its end in the background and lets a test
// wait for what it has seen so far.
type output struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	err    error // the error that ended reading (io.EOF normally)
	change chan struct{}
}

func collect(term *Terminal) *output {
	o := &output{change: make(chan struct{})}
	go func() {
		p := make([]byte, 32<<10)
		for {
			n, err := term.Read(p)
			o.mu.Lock()
			o.buf.Write(p[:n])
			if err != nil {
				o.err = err
			}
			close(o.change)
			o.change = make(chan struct{})
			o.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return o
}

// waitFor waits until cond holds for the output so far.
func (o *output) waitFor(t *testing.T, what string, cond func(out string, err error) bool) string {
	t.Helper()
	deadline := time.NewTimer(waitBound)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		out, err, change := o.buf.String(), o.err, o.change
		o.mu.Unlock()
		if cond(out, err) {
			return out
		}
		select {
		case <-change:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; output so far %q (err %v)", what, out, err)
		}
	}
}

func (o *output) waitText(t *testing.T, s string) string {
	t.Helper()
	return o.waitFor(t, fmt.Sprintf("%q", s), func(out string, _ error) bool { return strings.Contains(out, s) })
}

func (o *output) waitEnd(t *testing.T) (string, error) {
	t.Helper()
	out := o.waitFor(t, "the end of output", func(_ string, err error) bool { return err != nil })
	o.mu.Lock()
	defer o.mu.Unlock()
	return out, o.err
}

func wait(t *testing.T, term *Terminal) (ExitStatus, error) {
	t.Helper()
	select {
	case <-term.Done():
	case <-time.After(waitBound):
		t.Fatalf("terminal %q did not finish", term.ID())
	}
	return term.Wait()
}

func TestEchoRoundTrip(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "cat"})
	assert.NotZero(t, term.Pid())
	assert.True(t, strings.HasPrefix(term.ID(), "term-"), "generated id %q", term.ID())
	out := collect(term)
	_, err := term.Write([]byte("hello\n"))
	require.NoError(t, err)
	out.waitText(t, "hello\r\nhello\r\n") // the tty's echo, then cat's copy
	_, err = term.Write([]byte{4})        // ^D: end of input for cat
	require.NoError(t, err)
	st, err := wait(t, term)
	require.NoError(t, err)
	assert.Equal(t, ExitStatus{Code: 0}, st)
	_, err = out.waitEnd(t)
	assert.Equal(t, io.EOF, err)
}

func TestExitCode(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "sh", Args: []string{"-c", "echo bye; exit 3"}})
	got, err := io.ReadAll(term)
	require.NoError(t, err)
	assert.Equal(t, "bye\r\n", string(got))
	st, err := term.Wait()
	require.NoError(t, err)
	assert.Equal(t, ExitStatus{Code: 3}, st)
	assert.Equal(t, "exit code 3", st.String())
}

func TestSignalDeath(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "sh", Args: []string{"-c", "kill -KILL $$"}})
	st, err := wait(t, term)
	require.NoError(t, err)
	assert.Equal(t, ExitStatus{Code: 137, Signal: "SIGKILL"}, st)
}

func TestOpenErrors(t *testing.T) {
	c := startClient(t)
	ctx := context.Background()

	_, err := c.Open(ctx, OpenOptions{Cmd: "true", Dir: "/nonexistent/dir"})
	var oe *OpenError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, oe.Message, "/nonexistent/dir")
	assert.NotEmpty(t, oe.TerminalID)

	_, err = c.Open(ctx, OpenOptions{Cmd: "/no/such/program"})
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, err.Error(), "/no/such/program")

	live := open(t, c, OpenOptions{ID: "dup", Cmd: "sleep", Args: []string{"60"}})
	_, err = c.Open(ctx, OpenOptions{ID: "dup", Cmd: "true"})
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "dup", oe.TerminalID)
	assert.Equal(t, "terminal id already exists", oe.Message)

	// The id is free again once its terminal has exited.
	require.NoError(t, live.Close())
	st, err := wait(t, live)
	require.NoError(t, err)
	assert.Equal(t, "SIGHUP", st.Signal)
	again := open(t, c, OpenOptions{ID: "dup", Cmd: "true"})
	_, err = wait(t, again)
	require.NoError(t, err)
}

func TestOpenTimeoutSilentSidecar(t *testing.T) {
	// A "sidecar" that reads everything and never answers.
	fake := filepath.Join(t.TempDir(), "silent-sidecar")
	require.NoError(t, testproc.WriteExecutable(fake, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))
	c, err := Start(Options{SidecarPath: fake})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Open(ctx, OpenOptions{ID: "t1", Cmd: "true"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `"t1"`)
	require.NoError(t, c.Close())
}

func TestOpenTimeoutClosesLateTerminal(t *testing.T) {
	c := startClient(t)
	proc := c.stream().Process()
	// A frozen sidecar cannot answer in time.
	require.NoError(t, proc.Signal(syscall.SIGSTOP))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Open(ctx, OpenOptions{ID: "late", Cmd: "sleep", Args: []string{"60"}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `"late"`)

	// Once thawed, the sidecar opens it after all; the client must CLOSE
	// it, and free the id when its EXIT arrives.
	require.NoError(t, proc.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.inUse("late")
	}, waitBound, time.Millisecond)
	again := open(t, c, OpenOptions{ID: "late", Cmd: "true"})
	_, err = wait(t, again)
	require.NoError(t, err)

	// An expired context fails at once, without asking the sidecar.
	_, err = c.Open(ctx, OpenOptions{Cmd: "true"})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCreditBackpressure(t *testing.T) {
	const window = 16 << 10
	const total = 10 << 20
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "head", Args: []string{"-c", fmt.Sprint(total), "/dev/zero"}, Window: window})

	// Nobody reads: the sidecar may send exactly one window, then the
	// child blocks on a full PTY.
	require.Eventually(t, func() bool { return term.Buffered() == window }, waitBound, time.Millisecond)
	select {
	case <-term.Done():
		t.Fatal("the child finished although nobody read its output")
	default:
	}

	got := 0
	p := make([]byte, 4<<10)
	for {
		n, err := term.Read(p)
		got += n
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		assert.LessOrEqual(t, term.Buffered(), window)
	}
	assert.Equal(t, total, got)
	_, peak := term.win.stats()
	assert.LessOrEqual(t, peak, window, "the client never held more than the window unread")
	st, err := term.Wait()
	require.NoError(t, err)
	assert.Equal(t, 0, st.Code)
}

func TestRawMode(t *testing.T) {
	const total = 1 << 20
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "head", Args: []string{"-c", fmt.Sprint(total), "/dev/zero"}, Raw: true, Window: 4096})
	// Without credit the child runs to the end with nobody reading.
	_, err := wait(t, term)
	require.NoError(t, err)
	assert.Equal(t, total, term.Buffered())
	got, err := io.ReadAll(term)
	require.NoError(t, err)
	assert.Len(t, got, total)
}

func TestResize(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "sh", Args: []string{"-c", "read x; stty size"}, Cols: 80, Rows: 24})
	out := collect(term)
	require.NoError(t, term.Resize(100, 30))
	_, err := term.Write([]byte("\n"))
	require.NoError(t, err)
	text, _ := out.waitEnd(t)
	assert.Contains(t, text, "30 100")
}

func TestCloseEscalates(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "sh", Args: []string{"-c", `trap "" HUP; echo ready; exec sleep 60`}})
	out := collect(term)
	out.waitText(t, "ready")
	start := time.Now()
	require.NoError(t, term.Close())
	require.NoError(t, term.Close(), "closing twice is harmless")
	_, err := term.Write([]byte("x"))
	assert.ErrorIs(t, err, ErrTerminalClosed)
	st, err := wait(t, term)
	require.NoError(t, err)
	assert.Equal(t, ExitStatus{Code: 137, Signal: "SIGKILL"}, st, "SIGHUP was ignored, so SIGKILL followed")
	assert.Greater(t, time.Since(start), time.Second, "SIGKILL came after a grace period")
}

func TestSidecarKilled(t *testing.T) {
	c := startClient(t)
	live := open(t, c, OpenOptions{Cmd: "sleep", Args: []string{"60"}})
	out := collect(live)

	// Freeze the sidecar so that the next open stays pending.
	proc := c.stream().Process()
	require.NoError(t, proc.Signal(syscall.SIGSTOP))
	pendingErr := make(chan error, 1)
	go func() {
		_, err := c.Open(context.Background(), OpenOptions{ID: "pending", Cmd: "true"})
		pendingErr <- err
	}()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.pending["pending"] != nil
	}, waitBound, time.Millisecond)
	require.NoError(t, proc.Signal(syscall.SIGKILL))

	select {
	case err := <-pendingErr:
		require.ErrorIs(t, err, ErrSidecarGone)
		assert.Contains(t, err.Error(), `"pending"`)
	case <-time.After(waitBound):
		t.Fatal("the pending open did not fail")
	}
	_, err := wait(t, live)
	require.ErrorIs(t, err, ErrSidecarGone)
	assert.Contains(t, err.Error(), "killed")
	_, err = out.waitEnd(t)
	assert.ErrorIs(t, err, ErrSidecarGone, "Read reports the death, not a clean EOF")
	assert.ErrorIs(t, c.Err(), ErrSidecarGone)
	_, err = c.Open(context.Background(), OpenOptions{Cmd: "true"})
	assert.ErrorIs(t, err, ErrSidecarGone)
}

func TestCorruptStream(t *testing.T) {
	// A "sidecar" that answers with garbage: a zero-length frame.
	fake := filepath.Join(t.TempDir(), "garbage-sidecar")
	require.NoError(t, testproc.WriteExecutable(fake, []byte("#!/bin/sh\nprintf '\\000\\000\\000\\000\\001'\nexec cat >/dev/null\n"), 0o755))
	c, err := Start(Options{SidecarPath: fake})
	require.NoError(t, err)
	_, err = c.Open(context.Background(), OpenOptions{Cmd: "true"})
	require.ErrorIs(t, err, ErrSidecarGone)
	assert.Contains(t, err.Error(), "corrupt")
	assert.Error(t, c.Close())
}

func TestConcurrentUse(t *testing.T) {
	c := startClient(t)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				// Without echo, cat is the only writer: with echo the
				// kernel's echo of one line may land in the middle of
				// cat's copy of the one before.
				term, err := c.Open(context.Background(), OpenOptions{Cmd: "/bin/sh",
					Args: []string{"-c", "stty -echo; printf ready; exec cat"}, Window: 64})
				if err != nil {
					return err
				}
				var got []byte
				buf := make([]byte, 256)
				for !bytes.Contains(got, []byte("ready")) {
					n, err := term.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil {
						return fmt.Errorf("%s: before ready: %v (%q)", term.ID(), err, got)
					}
				}
				line := fmt.Sprintf("line from goroutine %d\n", i)
				read := make(chan []byte, 1)
				go func() { b, _ := io.ReadAll(term); read <- b }()
				for j := 0; j < 5; j++ {
					if _, err := term.Write([]byte(line)); err != nil {
						return err
					}
				}
				if _, err := term.Write([]byte{4}); err != nil {
					return err
				}
				st, err := term.Wait()
				if err != nil || st.Code != 0 {
					return fmt.Errorf("%s: %v %v", term.ID(), st, err)
				}
				got = append(got, <-read...)
				want := "ready" + strings.Repeat(strings.TrimSuffix(line, "\n")+"\r\n", 5)
				if string(got) != want {
					return fmt.Errorf("%s: got %q, want %q", term.ID(), got, want)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

func TestCloseWaitsForExits(t *testing.T) {
	c, err := Start(Options{SidecarPath: sidecarBin})
	require.NoError(t, err)
	var terms []*Terminal
	for i := 0; i < 3; i++ {
		terms = append(terms, open(t, c, OpenOptions{Cmd: "sleep", Args: []string{"60"}}))
	}
	require.NoError(t, c.Close())
	for _, term := range terms {
		select {
		case <-term.Done():
		default:
			t.Fatalf("terminal %q still live after Close returned", term.ID())
		}
		st, err := term.Wait()
		require.NoError(t, err, "the EXIT frame arrived before Close returned")
		assert.Equal(t, ExitStatus{Code: 137, Signal: "SIGKILL"}, st)
	}
	_, err = c.Open(context.Background(), OpenOptions{Cmd: "true"})
	assert.ErrorIs(t, err, ErrClientClosed)
}

// A large paste into a child that reads it slowly reaches it whole: the
// sidecar holds back instead of dropping, and Write blocks meanwhile.
func TestLargeWriteArrivesWhole(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "stty raw -echo -iexten; echo ready; head -c 2097164 | md5sum"}})
	out := collect(term)
	// Written only once the terminal is raw: a cooked line discipline
	// keeps at most 4 KiB of a line without newline and drops the rest,
	// and head would then wait for ever.
	out.waitText(t, "ready")
	data := append(bytes.Repeat([]byte("paste me! "), 2<<20/10), "<end-marker>"...)
	data = data[:2097164]
	go term.Write(data)
	got, err := out.waitEnd(t)
	require.ErrorIs(t, err, io.EOF)
	assert.Contains(t, got, fmt.Sprintf("%x", md5.Sum(data)))
}

// An ERROR frame about a live terminal (a sidecar that drops input) is
// returned by the next Write as an *InputError.
func TestInputErrorFromSidecar(t *testing.T) {
	// A stand-in sidecar: answers the first OPEN with OPENED and then an
	// ERROR about the same terminal, and reads on until stdin ends.
	fake := filepath.Join(t.TempDir(), "dropping-sidecar")
	script := `#!/usr/bin/env python3
import json, struct, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
def frame(t, body):
    out.write(struct.pack("<IB", len(body) + 1, t) + body); out.flush()
n, = struct.unpack("<I", inp.read(4))
t, body = inp.read(1), inp.read(n - 1)
tid = json.loads(body)["terminalId"]
frame(0x81, json.dumps({"terminalId": tid, "pid": 1}).encode())
frame(0x84, json.dumps({"terminalId": tid, "message": "input queue full"}).encode())
while inp.read(65536):
    pass
`
	require.NoError(t, testproc.WriteExecutable(fake, []byte(script), 0o755))
	c, err := Start(Options{SidecarPath: fake})
	require.NoError(t, err)
	defer c.Close()
	term, err := c.Open(context.Background(), OpenOptions{Cmd: "cat"})
	require.NoError(t, err)
	var ie *InputError
	require.Eventually(t, func() bool {
		_, err := term.Write([]byte("x"))
		return errors.As(err, &ie)
	}, waitBound, time.Millisecond)
	assert.Equal(t, term.ID(), ie.TerminalID)
	assert.Equal(t, "input queue full", ie.Message)
}

func TestConnectOverExistingStream(t *testing.T) {
	cmd := exec.Command(sidecarBin)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := Connect(stdout, stdin)
	term := open(t, c, OpenOptions{Cmd: "echo", Args: []string{"over a stream"}})
	got, err := io.ReadAll(term)
	require.NoError(t, err)
	assert.Equal(t, "over a stream\r\n", string(got))
	require.NoError(t, c.Close())
	require.NoError(t, cmd.Wait())
}
