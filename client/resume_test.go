package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/sshtest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/internal/testing/testsize"
)

// resumeBound is how long a test waits for one thing to happen. Generous:
// ssh's key exchange under -race on a loaded 2-core machine is slow.
const resumeBound = 30 * time.Second

// events collects a reconnecting client's events for a test to wait on.
type events struct {
	mu   sync.Mutex
	all  []Event
	wake chan struct{}
}

func newEvents() *events { return &events{wake: make(chan struct{})} }

func (e *events) on(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	close(e.wake)
	e.wake = make(chan struct{})
	e.mu.Unlock()
}

// next waits for the n-th event of kind (counting from 1) and returns it.
func (e *events) next(t *testing.T, kind EventKind, n int) Event {
	t.Helper()
	deadline := time.NewTimer(resumeBound)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		seen := 0
		for _, ev := range e.all {
			if ev.Kind == kind {
				if seen++; seen == n {
					e.mu.Unlock()
					return ev
				}
			}
		}
		wake, all := e.wake, append([]Event(nil), e.all...)
		e.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("no %v event #%d within %v; events: %v", kind, n, resumeBound, all)
		}
	}
}

func (e *events) count(kind EventKind) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// sink reads a terminal to its end, keeping everything.
type sink struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	err  error
	wake chan struct{}
}

func drain(term *Terminal) *sink {
	s := &sink{wake: make(chan struct{})}
	go func() {
		p := make([]byte, 32<<10)
		for {
			n, err := term.Read(p)
			s.mu.Lock()
			s.buf.Write(p[:n])
			if err != nil {
				s.err = err
			}
			close(s.wake)
			s.wake = make(chan struct{})
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// until waits for cond on the bytes so far (and the end, if any).
func (s *sink) until(t *testing.T, what string, cond func(b []byte, err error) bool) {
	t.Helper()
	deadline := time.NewTimer(resumeBound)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, n, err, wake := cond(s.buf.Bytes(), s.err), s.buf.Len(), s.err, s.wake
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s (%d bytes so far, err %v)", what, n, err)
		}
	}
}

func (s *sink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Len()
}

func (s *sink) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.buf.Bytes()...)
}

// floodLine is line i of terminal k's flood as the PTY shows it.
func floodLine(k, i int) string { return fmt.Sprintf("t%d %07d é€\r\n", k, i) }

// floodScript prints numbered lines until stop exists (looked for every
// 500 lines), so that every kill lands in the middle of a flood.
func floodScript(k int, stop string) string {
	return fmt.Sprintf(`exec awk 'BEGIN { for (i = 0; ; i++) { printf "t%d %%07d \303\251\342\202\254\n", i; `+
		`if (i %% 500 == 499) { if ((getline l < "%s") >= 0) exit; close("%s") } } }'`, k, stop, stop)
}

// checkFlood says whether got is exactly the first lines of terminal k's
// flood, whole lines only.
func checkFlood(k int, got []byte) error {
	var want bytes.Buffer
	for i := 0; want.Len() < len(got); i++ {
		want.WriteString(floodLine(k, i))
	}
	if bytes.Equal(got, want.Bytes()) {
		return nil
	}
	n := 0
	for n < len(got) && n < want.Len() && got[n] == want.Bytes()[n] {
		n++
	}
	return fmt.Errorf("terminal t%d: %d bytes; first difference at byte %d: got %q, want %q", k, len(got), n,
		got[n:min(n+40, len(got))], want.Bytes()[n:min(n+40, want.Len())])
}

// resumeRig is a persistent server reached over a real ssh to a real sshd,
// with a gate: while the gate file exists, a new transport waits before
// running ssh, so that the test can act while the client is certainly
// disconnected.
type resumeRig struct {
	srv     *sshtest.Server
	name    string
	env     []string // the runtime directory, for --stop
	dir     string
	gate    string
	argv    []string
	runtime string
}

func newResumeRig(t *testing.T, name string) *resumeRig {
	srv := sshtest.Start(t)
	env := persistEnv(t, name)
	rt := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PTYPLEX_RUNTIME_DIR="); ok {
			rt = v
		}
	}
	dir := t.TempDir()
	r := &resumeRig{srv: srv, name: name, env: env, dir: dir, gate: filepath.Join(dir, "gate"), runtime: rt}
	// The persistent server runs on the other side of ssh (here the same
	// machine), in the test's runtime directory.
	remote := fmt.Sprintf("PTYPLEX_RUNTIME_DIR=%s exec %s --persist %s", shellQuote(rt), shellQuote(sidecarBin), name)
	r.argv = append([]string{"sh", "-c", `while [ -e "$0" ]; do sleep 0.01; done; exec "$@"`, r.gate}, srv.Command(false, remote)...)
	return r
}

func (r *resumeRig) start(t *testing.T, ev *events, p ReconnectPolicy) *Client {
	t.Helper()
	p.OnEvent = ev.on
	c, err := Start(Options{Transport: r.argv, Stderr: testLog{t}, HelloTimeout: resumeBound, Reconnect: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (r *resumeRig) closeGate(t *testing.T) {
	if err := os.WriteFile(r.gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (r *resumeRig) openGate(t *testing.T) {
	if err := os.Remove(r.gate); err != nil {
		t.Fatal(err)
	}
}

// Four remote terminals flood numbered lines and a fifth echoes keys; the
// ssh client is SIGKILLed mid-flood three times a round. Each time the
// client reconnects and reattaches; keys typed while it is down (the gate
// holds the next ssh back until they are written) are queued. At the end
// every stream is byte for byte what its program wrote, and the keys
// arrived once each, in order.
func TestResumeOverSSH(t *testing.T) {
	t.Parallel()
	// 4 rounds in make test, 10 in make soak (PTYPLEX_SOAK=1).
	rounds := testsize.Pick(4, 10)
	if testing.Short() {
		rounds = 3
	}
	rig := newResumeRig(t, "resume")
	start := time.Now()
	// One client for every round (ssh's login is most of a reconnect's
	// time, and a round costs three of them); each round opens its own
	// terminals.
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond, Attempts: 50})
	for round := 0; round < rounds; round++ {
		resumeRound(t, rig, c, ev, round)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("%d rounds of 3 kills in %v", rounds, time.Since(start).Round(time.Millisecond))
}

func resumeRound(t *testing.T, rig *resumeRig, c *Client, ev *events, round int) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	stop := filepath.Join(rig.dir, fmt.Sprintf("stop%d", round))
	const floods = 4
	var terms [floods]*Terminal
	var outs [floods]*sink
	for k := range terms {
		term, err := c.Open(ctx, OpenOptions{ID: fmt.Sprintf("r%d-t%d", round, k), Cmd: "sh", Args: []string{"-c", floodScript(k, stop)},
			// Park: a flood stops while nobody holds it, so nothing
			// falls out of the journal during the gap.
			Detached: "park", Journal: 256 << 10, Window: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		terms[k], outs[k] = term, drain(term)
	}
	echo, err := c.Open(ctx, OpenOptions{ID: fmt.Sprintf("r%d-echo", round), Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}, Detached: "park"})
	if err != nil {
		t.Fatal(err)
	}
	echoed := drain(echo)
	echoed.until(t, "ready", func(b []byte, _ error) bool { return bytes.HasPrefix(b, []byte("ready\r\n")) })
	t.Logf("round %d: open after %v", round, time.Since(t0))
	var keys []string
	typeKey := func() {
		k := fmt.Sprintf("key %d.%d", round, len(keys))
		keys = append(keys, k)
		if _, err := echo.Write([]byte(k + "\n")); err != nil {
			t.Fatalf("writing %q: %v", k, err)
		}
	}

	for kill := 1; kill <= 3; kill++ {
		// Mid-flood: every stream has moved on since the last kill.
		for k, o := range outs {
			at := o.len()
			o.until(t, fmt.Sprintf("round %d, flood %d to move before kill %d", round, k, kill), func(b []byte, _ error) bool { return len(b) >= at+16<<10 })
		}
		typeKey()
		// The key was typed while connected: wait for its echo, so that
		// it is not in flight when the transport dies (input is
		// delivered at most once; what dies in ssh's buffers is lost).
		want := strings.Join(keys, "\r\n") + "\r\n"
		echoed.until(t, "the echo of "+keys[len(keys)-1], func(b []byte, _ error) bool { return bytes.HasSuffix(b, []byte(want)) })

		rig.closeGate(t)
		pid := c.Pid()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		ev.next(t, EventDisconnected, 3*round+kill)
		if !c.disconnected() {
			t.Fatal("the client says it is connected after the Disconnected event, with the gate closed")
		}
		typeKey()
		typeKey()
		rig.openGate(t)
		r := ev.next(t, EventReconnected, 3*round+kill)
		t.Logf("round %d kill %d: %v", round, kill, r)
		if c.Pid() == pid {
			t.Fatalf("kill %d: still the killed transport's pid after %v", kill, r)
		}
	}

	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("round %d: kills done after %v", round, time.Since(t0))
	want := "ready\r\n" + strings.Join(keys, "\r\n") + "\r\n"
	echoed.until(t, "every key's echo", func(b []byte, _ error) bool { return len(b) >= len(want) })
	echo.Write([]byte{4}) // ^D: cat ends
	echoed.until(t, "the echo terminal's end", func(_ []byte, err error) bool { return err != nil })
	if got := string(echoed.bytes()); got != want {
		t.Errorf("round %d: keys arrived as %q, want %q", round, got, want)
	}
	for k, o := range outs {
		o.until(t, fmt.Sprintf("flood %d's end", k), func(_ []byte, err error) bool { return err != nil })
		if st, err := terms[k].Wait(); err != nil || st.Code != 0 {
			t.Fatalf("round %d: flood %d ended with %v, %v", round, k, st, err)
		}
		if err := checkFlood(k, o.bytes()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if n := ev.count(EventLost); n != 0 {
		t.Errorf("round %d: %d Lost events in park mode", round, n)
	}
}

// The ssh client is stopped (SIGSTOP), not killed: the transport hangs
// without ending, as with a network gone away. The keepalive notices
// within its interval plus its timeout, kills ssh and reconnects, and the
// flood goes on with no byte lost or repeated.
func TestKeepaliveDetectsHungTransport(t *testing.T) {
	rig := newResumeRig(t, "hung")
	ev := newEvents()
	p := ReconnectPolicy{InitialDelay: 5 * time.Millisecond, KeepaliveInterval: 200 * time.Millisecond, KeepaliveTimeout: 800 * time.Millisecond}
	c := rig.start(t, ev, p)
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	stop := filepath.Join(rig.dir, "stop")
	term, err := c.Open(ctx, OpenOptions{ID: "flood", Cmd: "sh", Args: []string{"-c", floodScript(0, stop)}, Detached: "park", Window: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(term)
	out.until(t, "the flood", func(b []byte, _ error) bool { return len(b) >= 64<<10 })
	pid := c.Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	d := ev.next(t, EventDisconnected, 1)
	took := time.Since(stopped)
	bound := p.KeepaliveInterval + p.KeepaliveTimeout
	t.Logf("a hung transport noticed after %v (bound %v): %v", took, bound, d.Err)
	if !strings.Contains(d.Err.Error(), "keepalive") {
		t.Errorf("Disconnected for %v, want the keepalive's verdict", d.Err)
	}
	// The kill itself, and reaping ssh, come on top of the detection; a
	// loaded machine gets a second for them.
	if took > bound+time.Second {
		t.Errorf("noticed after %v, want within %v", took, bound)
	}
	ev.next(t, EventReconnected, 1)
	at := out.len()
	out.until(t, "the flood after the reconnect", func(b []byte, _ error) bool { return len(b) >= at+64<<10 })
	os.WriteFile(stop, nil, 0o600)
	out.until(t, "the flood's end", func(_ []byte, err error) bool { return err != nil })
	if err := checkFlood(0, out.bytes()); err != nil {
		t.Fatal(err)
	}
}

// The default policy notices a dead connection within 15 s.
func TestKeepaliveDefaultBound(t *testing.T) {
	if b := (ReconnectPolicy{}).DetectionBound(); b > 15*time.Second || b <= 0 {
		t.Fatalf("default detection bound %v, want within 15 s", b)
	}
	if b := (ReconnectPolicy{KeepaliveInterval: -1}).DetectionBound(); b != 0 {
		t.Fatalf("keepalive off: bound %v", b)
	}
}

// localRig is a persistent server on this machine behind a transport of
// sh: the gate holds a reconnect back, the fail file makes it fail.
type localRig struct {
	gate, fail string
	argv       []string
	env        []string
}

func newLocalRig(t *testing.T, name string) *localRig {
	dir := t.TempDir()
	r := &localRig{gate: filepath.Join(dir, "gate"), fail: filepath.Join(dir, "fail"), env: persistEnv(t, name)}
	r.argv = []string{"sh", "-c", `while [ -e "$0" ]; do sleep 0.01; done; if [ -e "$1" ]; then echo no way through >&2; exit 1; fi; shift; exec "$@"`,
		r.gate, r.fail, sidecarBin, "--persist", name}
	return r
}

func (r *localRig) start(t *testing.T, ev *events, p ReconnectPolicy) *Client {
	t.Helper()
	p.OnEvent = ev.on
	c, err := Start(Options{Transport: r.argv, Env: r.env, Stderr: testLog{t}, Reconnect: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Writes while disconnected queue up to QueueLimit bytes; the one that
// would pass it fails whole with ErrDisconnectedQueueFull, and the ones
// before (and a smaller one after) arrive in order after the reconnect.
func TestResumeQueueLimit(t *testing.T) {
	rig := newLocalRig(t, "queue")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, QueueLimit: 100})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	echo, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(echo)
	out.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	want := "ready\r\n"
	for i := 0; i < 10; i++ { // 90 bytes
		line := fmt.Sprintf("queued %d", i) // 8 bytes and a newline
		if n, err := echo.Write([]byte(line + "\n")); err != nil || n != 9 {
			t.Fatalf("write %d while disconnected: %d, %v", i, n, err)
		}
		want += line + "\r\n"
	}
	if n, err := echo.Write([]byte("too long to fit\n")); !errors.Is(err, ErrDisconnectedQueueFull) || n != 0 {
		t.Fatalf("a write past the limit: %d, %v", n, err)
	} else {
		t.Logf("past the limit: %v", err)
	}
	if _, err := echo.Write([]byte("the last\n")); err != nil { // 9 more: 99
		t.Fatalf("a write within the limit after a refused one: %v", err)
	}
	want += "the last\r\n"
	if _, err := c.Open(ctx, OpenOptions{Cmd: "true"}); !errors.Is(err, ErrDisconnected) {
		t.Errorf("Open while disconnected: %v, want ErrDisconnected", err)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	out.until(t, "the queued keys", func(b []byte, _ error) bool { return len(b) >= len(want) })
	if got := string(out.bytes()); got != want {
		t.Fatalf("after the reconnect: %q, want %q", got, want)
	}
	// And the queue is empty again: a write as long as the limit fits.
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 2)
	if _, err := echo.Write([]byte(strings.Repeat("x", 99) + "\n")); err != nil {
		t.Fatalf("a write of the whole limit after a reconnect: %v", err)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 2)
}

// A transport that fails every time: after Attempts failed attempts the
// client gives up, and its terminals end with an error that says why.
func TestResumeGivesUp(t *testing.T) {
	rig := newLocalRig(t, "giveup")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, Attempts: 3})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	term, err := c.Open(ctx, OpenOptions{Cmd: "cat"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rig.fail, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	g := ev.next(t, EventGaveUp, 1)
	if n := ev.count(EventReconnectFailed); n != 3 {
		t.Errorf("%d ReconnectFailed events before giving up after 3 attempts, want 3", n)
	}
	t.Logf("%v", g)
	if !strings.Contains(g.Err.Error(), "after 3 attempts") {
		t.Errorf("GaveUp: %v", g.Err)
	}
	select {
	case <-term.Done():
	case <-time.After(resumeBound):
		t.Fatal("the terminal did not end after GaveUp")
	}
	if _, err := term.Wait(); !errors.Is(err, ErrSidecarGone) || !strings.Contains(err.Error(), "gave up reconnecting") {
		t.Fatalf("the terminal ended with %v", err)
	}
	if _, err := term.Write([]byte("x")); !errors.Is(err, ErrSidecarGone) {
		t.Fatalf("Write after GaveUp: %v", err)
	}
	<-c.Done()
	if err := c.Err(); !errors.Is(err, ErrSidecarGone) {
		t.Fatalf("Err after GaveUp: %v", err)
	}
}

// Reconnect needs a peer that keeps its terminals; Persistent and Args
// are refused with a Transport rather than dropped.
func TestResumeNeedsPersistent(t *testing.T) {
	_, err := Start(Options{SidecarPath: sidecarBin, Reconnect: &ReconnectPolicy{}})
	if err == nil || !strings.Contains(err.Error(), "persistent sidecar") {
		t.Fatalf("Reconnect to a plain sidecar: %v", err)
	}
	if _, err := Persistent("x", Options{Transport: []string{"sh", "-c", "exit 1"}}); err == nil || !strings.Contains(err.Error(), "--persist x") {
		t.Fatalf("Persistent with a Transport: %v", err)
	}
	if _, err := Start(Options{Transport: []string{sidecarBin}, Args: []string{"--persist", "x"}}); err == nil || !strings.Contains(err.Error(), "do not apply") {
		t.Fatalf("Args with a Transport: %v", err)
	}
}

// Options.Install puts the sidecar on "the other machine" (sh -c stands
// in for ssh, as in internal/remoteinstall's tests) before the first
// connect and runs the installed one, persistent, through the same
// transport; a reconnect runs it again without installing.
func TestInstallOnFirstConnect(t *testing.T) {
	bins := t.TempDir()
	sc, err := os.ReadFile(sidecarBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := testproc.WriteExecutable(filepath.Join(bins, SidecarName), sc, 0o755); err != nil {
		t.Fatal(err)
	}
	// The installer checks ptyplex's --version too; a stand-in says it.
	out, err := exec.Command(sidecarBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Replace(strings.TrimSpace(string(out)), SidecarName, "ptyplex", 1)
	if err := testproc.WriteExecutable(filepath.Join(bins, "ptyplex"), []byte("#!/bin/sh\necho '"+line+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "remote home")
	env := persistEnv(t, "installed")
	var log syncWriter
	log.b = &strings.Builder{}
	ev := newEvents()
	c, err := Start(Options{
		Install:   &InstallOptions{Transport: []string{"sh", "-c"}, LocalDir: bins, Dir: root, Args: []string{"--persist", "installed"}, Log: &log},
		Env:       env,
		Stderr:    testLog{t},
		Reconnect: &ReconnectPolicy{InitialDelay: time.Millisecond, OnEvent: ev.on},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Logf("installer: %s", log.String())
	if peer, _ := c.Peer(); !peer.Has("persist") {
		t.Fatalf("the installed sidecar's HELLO: %+v", peer)
	}
	installed, _ := filepath.Glob(filepath.Join(root, "*", SidecarName))
	if len(installed) != 1 {
		t.Fatalf("installed: %v", installed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	term, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	o := drain(term)
	o.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventReconnected, 1)
	term.Write([]byte("still here\n"))
	o.until(t, "the echo after the reconnect", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\nstill here\r\n")) })
}

// In ring mode a terminal goes on while nobody holds it, and what falls
// out of its journal is lost: the resume reports it (EventLost), and Read
// carries the server's repaint in place of the lost bytes, after which
// Offset is where the server's count is.
func TestResumeLostInRing(t *testing.T) {
	rig := newLocalRig(t, "ring")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	dir := t.TempDir()
	trigger, flooded := filepath.Join(dir, "trigger"), filepath.Join(dir, "flooded")
	for _, f := range []string{trigger, flooded} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("stty -echo; echo ready; read x < %s; seq 1 100000; echo done > %s; exec cat", trigger, flooded)
	term, err := c.Open(ctx, OpenOptions{ID: "ring", Cmd: "sh", Args: []string{"-c", script}, Journal: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(term)
	out.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	// The flood runs while nobody holds the terminal; the fifos say when
	// it starts and when it is over.
	if err := os.WriteFile(trigger, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(flooded); err != nil {
		t.Fatal(err)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	lost := ev.next(t, EventLost, 1)
	if lost.TerminalID != "ring" || lost.Lost == 0 {
		t.Fatalf("Lost event: %+v", lost)
	}
	t.Logf("%v", lost)
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %+v, %v", list, err)
	}
	term.Write([]byte("after\n"))
	out.until(t, "the echo after the repaint", func(b []byte, _ error) bool { return bytes.HasSuffix(b, []byte("after\r\n")) })
	if got, want := term.Offset(), list[0].Produced+uint64(len("after\r\n")); got != want {
		t.Fatalf("Offset after the repaint and the echo: %d, want %d", got, want)
	}
	b := out.bytes()
	if bytes.Contains(b, []byte("\r\n1\r\n2\r\n3\r\n")) {
		t.Errorf("the start of the flood, which fell out of the journal, was delivered")
	}
	if !bytes.Contains(b, []byte("100000")) {
		t.Errorf("the repaint does not show the flood's last line: %q", b[max(0, len(b)-300):])
	}
}

// Close while the connection is down ends the client cleanly: no
// reconnect after it, and the terminals end.
func TestResumeCloseWhileDown(t *testing.T) {
	rig := newLocalRig(t, "closedown")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	term, err := c.Open(ctx, OpenOptions{Cmd: "cat"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	if err := c.Close(); err != nil {
		t.Fatalf("Close while disconnected: %v", err)
	}
	<-term.Done()
	if n := ev.count(EventReconnected); n != 0 {
		t.Fatalf("%d reconnects after Close", n)
	}
}

// A write larger than one INPUT frame (64 KiB) that would pass QueueLimit
// fails whole while disconnected: none of it reaches the child. Its first
// frames used to be queued before the one that did not fit failed, and the
// child got the first part of the paste.
func TestResumeQueueLimitLargeWriteFailsWhole(t *testing.T) {
	rig := newLocalRig(t, "queuewhole")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, QueueLimit: 100 << 10})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	// Raw and without echo: the bytes come back as they were written (and
	// the newline without a CR).
	echo, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c", "stty raw -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(echo)
	out.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\n")) })
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	if n, err := echo.Write(bytes.Repeat([]byte("a"), 20<<10)); err != nil || n != 20<<10 {
		t.Fatalf("a write within the limit: %d, %v", n, err)
	}
	// 20 KiB queued: the first 64 KiB frame of this one would fit, the
	// rest would not.
	if n, err := echo.Write(bytes.Repeat([]byte("b"), 100<<10)); !errors.Is(err, ErrDisconnectedQueueFull) || n != 0 {
		t.Fatalf("a 100 KiB write past the limit: %d, %v; want 0 and ErrDisconnectedQueueFull", n, err)
	}
	if _, err := echo.Write([]byte("end")); err != nil {
		t.Fatal(err)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	want := "ready\n" + strings.Repeat("a", 20<<10) + "end"
	out.until(t, "the queued keys", func(b []byte, _ error) bool { return bytes.HasSuffix(b, []byte("end")) })
	if got := string(out.bytes()); got != want {
		t.Fatalf("after the reconnect: %d bytes (%d of them b), want %d without b", len(got), strings.Count(got, "b"), len(want))
	}
}

// A Close that cannot be queued while disconnected (no queue) leaves the
// terminal as it was: Write still works and a later Close sends CLOSE. The
// terminal was marked closed all the same, so Write failed with
// ErrTerminalClosed and every later Close did nothing, the program running
// on.
func TestResumeRefusedCloseCanBeRetried(t *testing.T) {
	rig := newLocalRig(t, "closeretry")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, QueueLimit: -1})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	echo, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(echo)
	out.until(t, "ready", func(b []byte, _ error) bool { return bytes.Equal(b, []byte("ready\r\n")) })
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	if err := echo.Close(); !errors.Is(err, ErrDisconnectedQueueFull) {
		t.Fatalf("Close while disconnected with no queue: %v", err)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	if _, err := echo.Write([]byte("after\n")); err != nil {
		t.Fatalf("Write after the refused Close: %v", err)
	}
	out.until(t, "the echo", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("after\r\n")) })
	if err := echo.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := echo.Wait()
	if err != nil || st.Signal != "SIGHUP" {
		t.Fatalf("after the second Close: %v, %v; want SIGHUP", st, err)
	}
}

// While a reconnecting client is down, the requests that wait for an
// answer fail at once with ErrDisconnected, each error naming its
// request. Upgrade wrote to the dead connection and failed with
// ErrSidecarGone; Attach and Revive said "open terminal".
func TestResumeRequestsWhileDown(t *testing.T) {
	rig := newLocalRig(t, "reqdown")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)
	_, err := c.Upgrade(ctx, sidecarBin, "v")
	if !errors.Is(err, ErrDisconnected) || !strings.HasPrefix(err.Error(), "upgrade: ") {
		t.Errorf("Upgrade while down: %v", err)
	}
	_, err = c.Attach(ctx, "a", 0)
	if !errors.Is(err, ErrDisconnected) || !strings.HasPrefix(err.Error(), "attach terminal: ") {
		t.Errorf("Attach while down: %v", err)
	}
	_, err = c.Revive(ctx, "r")
	if !errors.Is(err, ErrDisconnected) || !strings.HasPrefix(err.Error(), "revive terminal: ") {
		t.Errorf("Revive while down: %v", err)
	}
	_, err = c.Open(ctx, OpenOptions{Cmd: "true"})
	if !errors.Is(err, ErrDisconnected) || !strings.HasPrefix(err.Error(), "open terminal: ") {
		t.Errorf("Open while down: %v", err)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
}

// While a reconnecting client is down there is no transport process, and
// Pid says 0 (as the npm package's pid does), not the dead one's pid;
// after the reconnect it is the new transport's.
func TestResumePidWhileDisconnected(t *testing.T) {
	rig := newLocalRig(t, "pid")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	old := c.Pid()
	if old <= 0 {
		t.Fatalf("Pid of a connected client: %d", old)
	}
	os.WriteFile(rig.gate, nil, 0o600)
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ev.next(t, EventDisconnected, 1)
	if pid := c.Pid(); pid != 0 {
		t.Errorf("Pid while disconnected: %d (the killed transport was %d), want 0", pid, old)
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	pid := c.Pid()
	if pid <= 0 || pid == old {
		t.Fatalf("Pid after the reconnect: %d (the killed one was %d)", pid, old)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("Pid after the reconnect, %d, is no running process: %v", pid, err)
	}
}
