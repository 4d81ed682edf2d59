//go:build unix

package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// A reconnecting client must not take back, when it resumes, a terminal
// that another connection took over while it was down: the persistent
// server's holder generations let it tell (PROTOCOL.md, "Holder
// generations").

// takeoverRig is a reconnecting client A on a local persistent server,
// with two echoing terminals: t1, the one taken over, and t2, which A
// keeps and uses as a barrier (the server handles a connection's frames
// in order, so once A reads t2's echo of something written after the
// reconnect, every frame A queued before it was handled).
type takeoverRig struct {
	*localRig
	name   string
	ev     *events
	a      *Client
	t1, t2 *Terminal
	o1, o2 *sink
	ctx    context.Context
}

// echoScript prints ready and then echoes lines, without the PTY's echo:
// what a terminal's output shows is what reached its child.
const echoScript = "stty -echo; echo ready; exec cat"

func newTakeoverRig(t *testing.T, name string) *takeoverRig {
	r := &takeoverRig{localRig: newLocalRig(t, name), name: name, ev: newEvents()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*resumeBound)
	t.Cleanup(cancel)
	r.ctx = ctx
	r.a = r.start(t, r.ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	r.t1, r.o1 = r.openEcho(t, r.a, "t1")
	r.t2, r.o2 = r.openEcho(t, r.a, "t2")
	return r
}

func (r *takeoverRig) openEcho(t *testing.T, c *Client, id string) (*Terminal, *sink) {
	t.Helper()
	term, err := c.Open(r.ctx, OpenOptions{ID: id, Cmd: "sh", Args: []string{"-c", echoScript}})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(term)
	out.until(t, id+" ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })
	return term, out
}

// drop cuts A's link (its transport is killed) and holds the reconnect
// back until reconnect; it returns once A noticed (the n-th drop).
func (r *takeoverRig) drop(t *testing.T, n int) {
	t.Helper()
	if err := os.WriteFile(r.gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(r.a.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.ev.next(t, EventDisconnected, n)
}

// reconnect lets A's n-th reconnect through and waits for it.
func (r *takeoverRig) reconnect(t *testing.T, n int) {
	t.Helper()
	os.Remove(r.gate)
	r.ev.next(t, EventReconnected, n)
}

// other is a second host B: a plain (not reconnecting) client of the
// same server.
func (r *takeoverRig) other(t *testing.T) *Client {
	t.Helper()
	b, err := Persistent(r.name, Options{SidecarPath: sidecarBin, Env: r.env, Stderr: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// barrier waits until the server handled every frame A sent before it
// (see takeoverRig).
func (r *takeoverRig) barrier(t *testing.T, what string) {
	t.Helper()
	if _, err := r.t2.Write([]byte(what + "\n")); err != nil {
		t.Fatal(err)
	}
	r.o2.until(t, what+" on t2", func(b []byte, _ error) bool { return bytes.HasSuffix(b, []byte(what+"\r\n")) })
}

// takenOver checks, once A reconnected, that A's t1 ended as a terminal
// taken over by another connection does (ErrDetached), and that A's t2
// did not. The reconnect is over only once every resume was answered,
// and t1 ends as its refusal is handled: it has ended by now.
func (r *takeoverRig) takenOver(t *testing.T) {
	t.Helper()
	select {
	case <-r.t1.Done():
	default:
		t.Fatal("A reconnected and its t1 is still live: A's resume took it back")
	}
	_, err := r.t1.Wait()
	if !errors.Is(err, ErrDetached) || !strings.Contains(err.Error(), "taken over by another connection") {
		t.Fatalf("A's t1 ended with %v, want ErrDetached, taken over", err)
	}
	t.Logf("A's t1: %v", err)
	if _, werr := r.t1.Write([]byte("x")); !errors.Is(werr, ErrDetached) {
		t.Errorf("Write to the taken-over t1: %v, want ErrDetached", werr)
	}
	r.o1.until(t, "the end of A's t1", func(_ []byte, err error) bool { return err != nil })
	if got := string(r.o1.bytes()); got != "ready\r\n" {
		t.Errorf("A's t1 read %q, want only what it had read before the drop", got)
	}
	select {
	case <-r.t2.Done():
		_, err := r.t2.Wait()
		t.Fatalf("A's t2, which nobody took, ended: %v", err)
	default:
	}
}

// listed returns the server's entry for id.
func listed(t *testing.T, ctx context.Context, c *Client, id string) proto.ListedTerminal {
	t.Helper()
	l, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l {
		if e.TerminalID == id {
			return e
		}
	}
	t.Fatalf("List has no %q: %+v", id, l)
	return proto.ListedTerminal{}
}

// heldGen is the holder generation the client last recorded for term.
func heldGen(term *Terminal) uint64 {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.holdGen
}

// A holds t1; its link is cut; B attaches t1 as holder; A reconnects. A's
// resume used to take t1 back from B (B got DETACHED "taken over"). Now A
// reports t1 taken over, B keeps it (its keys reach the child, it reads
// the output), and neither what A queued for t1 while down nor t1's output
// reaches A.
func TestResumeAfterATakeoverIsRefused(t *testing.T) {
	r := newTakeoverRig(t, "takenwhiledown")
	if heldGen(r.t1) == 0 {
		t.Fatal("A recorded no holder generation from t1's OPENED")
	}
	r.drop(t, 1)
	b := r.other(t)
	bt, err := b.Attach(r.ctx, "t1", r.t1.Offset())
	if err != nil {
		t.Fatal(err)
	}
	bo := drain(bt)
	if _, err := r.t1.Write([]byte("from A while down\n")); err != nil {
		t.Fatalf("A's write while down: %v", err)
	}
	r.reconnect(t, 1)
	r.takenOver(t)
	r.barrier(t, "after the resume")
	if _, err := bt.Write([]byte("from B\n")); err != nil {
		t.Fatalf("B's write: %v", err)
	}
	bo.until(t, "B's echo", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("from B\r\n")) })
	if got := string(bo.bytes()); got != "from B\r\n" {
		t.Errorf("B read %q, want only its own echo (A's queued keys must not reach the child)", got)
	}
	select {
	case <-bt.Done():
		_, err := bt.Wait()
		t.Fatalf("B's t1 ended: %v", err)
	default:
	}
	e := listed(t, r.ctx, b, "t1")
	if !e.Attached || e.HoldGen != heldGen(bt) || e.Exited {
		t.Errorf("t1 after A's resume: %+v, want attached at B's holder generation %d", e, heldGen(bt))
	}
	// And A's connection is well: t2 was resumed.
	if l := listed(t, r.ctx, r.a, "t2"); !l.Attached {
		t.Errorf("A's t2 after the resume: %+v", l)
	}
}

// Without a takeover the resume goes on as before, with the holder
// generation the server gave: A's queued keys arrive, the client learns
// each resume's new generation, and resumes with it the next time.
func TestResumeWithItsHoldGen(t *testing.T) {
	r := newTakeoverRig(t, "resumegen")
	gen := heldGen(r.t1)
	if gen == 0 {
		t.Fatal("A recorded no holder generation from t1's OPENED")
	}
	for round := 1; round <= 2; round++ {
		r.drop(t, round)
		if _, err := r.t1.Write([]byte("queued\n")); err != nil {
			t.Fatal(err)
		}
		r.reconnect(t, round)
		want := "ready\r\n" + strings.Repeat("queued\r\n", round)
		r.o1.until(t, "the queued keys", func(b []byte, _ error) bool { return len(b) >= len(want) })
		if got := string(r.o1.bytes()); got != want {
			t.Fatalf("round %d: t1 read %q, want %q", round, got, want)
		}
		e := listed(t, r.ctx, r.a, "t1")
		now := heldGen(r.t1)
		if now <= gen || e.HoldGen != now || !e.Attached {
			t.Fatalf("round %d: A's holder generation %d (before the resume %d), the server's %+v", round, now, gen, e)
		}
		gen = now
	}
}

// B takes t1 over while A is down and lets it go again (Detach) before A
// reconnects: A still reports t1 taken over, and does not take it: t1
// stays detached, running, and what A queued for it never reaches it.
func TestResumeAfterATakeoverAndDetachIsRefused(t *testing.T) {
	r := newTakeoverRig(t, "takenanddetached")
	r.drop(t, 1)
	b := r.other(t)
	bt, err := b.Attach(r.ctx, "t1", r.t1.Offset())
	if err != nil {
		t.Fatal(err)
	}
	bGen := heldGen(bt)
	if err := bt.Detach(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bt.Done():
	case <-time.After(resumeBound):
		t.Fatal("B's Detach was not confirmed")
	}
	if _, err := r.t1.Write([]byte("from A while down\n")); err != nil {
		t.Fatalf("A's write while down: %v", err)
	}
	r.reconnect(t, 1)
	r.takenOver(t)
	r.barrier(t, "after the resume")
	e := listed(t, r.ctx, b, "t1")
	if e.Attached || e.Exited || e.HoldGen != bGen {
		t.Fatalf("t1 after A's resume: %+v, want detached, running, at B's holder generation %d", e, bGen)
	}
	// Nothing of A's reached the child: a new holder reads from where B
	// left and finds only its own echo.
	bt2, err := b.Attach(r.ctx, "t1", bt.Offset())
	if err != nil {
		t.Fatal(err)
	}
	bo := drain(bt2)
	if _, err := bt2.Write([]byte("from B\n")); err != nil {
		t.Fatal(err)
	}
	bo.until(t, "B's echo", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("from B\r\n")) })
	if got := string(bo.bytes()); got != "from B\r\n" {
		t.Errorf("t1 read %q after A's refused resume, want only B's echo", got)
	}
}

// A views t1, whose holder H hands it over to A (ATTACHED "mode":"hold",
// with A's holder generation); A's link drops and B takes t1: A's resume
// is refused as for a terminal A opened. Without the hand-over's
// generation A resumed without one, which takes t1 from B.
func TestResumeOfAHandedOverTerminalAfterATakeover(t *testing.T) {
	r := newTakeoverRig(t, "handedtaken")
	h := r.other(t)
	ht, _ := r.openEcho(t, h, "shared")
	vt, err := r.a.Attach(r.ctx, "shared", ht.Offset(), AttachOptions{View: true})
	if err != nil {
		t.Fatal(err)
	}
	vo := drain(vt)
	if err := ht.HandOver(vt.ViewerNumber()); err != nil {
		t.Fatal(err)
	}
	// HandOver returned: the server handed the terminal over. A's
	// ATTACHED "hold" comes from the terminal's own writer, which may
	// send it after the answer to a request A makes now: wait for it.
	require.Eventually(t, func() bool { return !vt.Viewing() && heldGen(vt) != 0 }, waitBound, time.Millisecond,
		"A was not handed the terminal: it still views it, or has no holder generation")
	r.drop(t, 1)
	b := r.other(t)
	bt, err := b.Attach(r.ctx, "shared", vt.Offset())
	if err != nil {
		t.Fatal(err)
	}
	r.reconnect(t, 1)
	select {
	case <-vt.Done():
	default:
		t.Fatal("A reconnected and its handed-over terminal is still live: A's resume took it back")
	}
	if _, err := vt.Wait(); !errors.Is(err, ErrDetached) {
		t.Fatalf("A's handed-over terminal ended with %v, want ErrDetached", err)
	}
	vo.until(t, "the end", func(_ []byte, err error) bool { return err != nil })
	if e := listed(t, r.ctx, b, "shared"); !e.Attached || e.HoldGen != heldGen(bt) {
		t.Errorf("the terminal after A's resume: %+v, want held by B at %d", e, heldGen(bt))
	}
}

// A's resume gets through, and the connection drops before its ATTACHED
// reaches A: A never learnt the generation the server gave it. A keeps
// the one it had and resumes with it again, and the server takes that
// (resumes do not count against a resume): t1 goes on, A's keys arrive.
func TestResumeAgainAfterALostAttached(t *testing.T) {
	name := "lostattached"
	env := persistEnv(t, name)
	swallow := filepath.Join(t.TempDir(), "swallow")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvents()
	// The keepalive notices the connection whose frames the relay drops.
	p := ReconnectPolicy{InitialDelay: time.Millisecond, KeepaliveInterval: 50 * time.Millisecond, KeepaliveTimeout: time.Second, OnEvent: ev.on}
	a, err := Start(Options{Transport: []string{exe, sidecarBin, "--persist", name}, Env: append(env, relayEnv+"="+swallow), Stderr: testLog{t}, Reconnect: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	r := &takeoverRig{name: name, ev: ev, a: a}
	ctx, cancel := context.WithTimeout(context.Background(), 2*resumeBound)
	defer cancel()
	r.ctx = ctx
	r.t1, r.o1 = r.openEcho(t, a, "t1")
	opened := heldGen(r.t1)
	if opened == 0 {
		t.Fatal("A recorded no holder generation from t1's OPENED")
	}
	if err := os.WriteFile(swallow, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(a.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ev.next(t, EventDisconnected, 1)
	// The first attempt's ATTACHED is dropped (the relay took the file),
	// the keepalive ends that connection, the next attempt resumes.
	ev.next(t, EventReconnected, 1)
	if _, err := os.Stat(swallow); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no ATTACHED was dropped: %v", err)
	}
	if n := ev.count(EventReconnectFailed); n == 0 {
		t.Fatal("the reconnect whose ATTACHED was dropped did not fail")
	}
	select {
	case <-r.t1.Done():
		_, err := r.t1.Wait()
		t.Fatalf("t1 ended after a resume whose ATTACHED was lost: %v", err)
	default:
	}
	if _, err := r.t1.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	r.o1.until(t, "the echo", func(b []byte, _ error) bool { return bytes.HasSuffix(b, []byte("after\r\n")) })
	// The server gave the lost ATTACH a generation (past the OPEN's),
	// and the resume after it another.
	e := listed(t, ctx, a, "t1")
	if now := heldGen(r.t1); !e.Attached || e.HoldGen != now || now < opened+2 {
		t.Fatalf("t1: A's holder generation %d (at its OPEN %d), the server's %+v", now, opened, e)
	}
	t.Logf("holder generations: OPEN %d, now %d, after %d failed attempt(s)", opened, heldGen(r.t1), ev.count(EventReconnectFailed))
}
