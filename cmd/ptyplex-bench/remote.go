//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/testing/sshtest"
)

// The remote rows: a terminal on a sidecar reached over ssh to 127.0.0.1,
// through the Go client, against ssh itself in the same pair (docs/remote.md):
//   - keystroke echo p50 and p99 against `ssh -tt 127.0.0.1 cat` (the ssh
//     floor: a remote PTY and nothing else);
//   - throughput of one terminal against `ssh 127.0.0.1 cat FILE`;
//   - resume: the ssh client SIGKILLed, to the first resumed byte, against
//     a login (`ssh 127.0.0.1 true`), which is most of it; and a hung ssh
//     (SIGSTOP), first the keepalive's detection against its timeout, then
//     detection to the first resumed byte.
//
// The bench starts its own sshd (internal/testing/sshtest); without one the rows
// are skipped with a notice.

// remoteEchoSamples is the keys per echo run (after 20 of warm-up).
const remoteEchoSamples = 300

// The keepalive of the hung-transport rows: short, so that a run takes a
// second and not fifteen.
const (
	remoteKeepaliveInterval = 100 * time.Millisecond
	remoteKeepaliveTimeout  = 500 * time.Millisecond
)

func remoteRows(t *table, filter *regexp.Regexp, tmp string) {
	want := func(what string) bool { return filter.MatchString("remote " + what) }
	if !want("echo") && !want("throughput") && !want("resume") && !want("keepalive") {
		return
	}
	dir := filepath.Join(tmp, "sshd")
	srv, err := sshtest.New(dir, func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "remote rows: "+format+"\n", a...)
	})
	if errors.Is(err, sshtest.ErrNoSshd) {
		fmt.Fprintf(os.Stderr, "remote rows skipped: %v\n", err)
		return
	}
	if err != nil {
		fatalf("remote rows: starting sshd: %v", err)
	}
	defer srv.Stop()
	bin, err := filepath.Abs(*sidecarBin)
	if err != nil {
		fatalf("%v", err)
	}
	// The remote command line: the sidecar, with -sidecar-env before it.
	remote := func() string {
		if *sidecarEnv == "" {
			return shellQuote(bin)
		}
		return "env " + *sidecarEnv + " " + shellQuote(bin)
	}

	if want("echo") {
		var p50, p99, pipe, local series
		run := 0
		measure("remote echo", func() (float64, float64, error) {
			run++
			var floor, ours, noPTY, sidecar, direct []time.Duration
			var err error
			// Alternate which goes first, so neither always gets the
			// quieter half of the pair.
			for _, first := range order(run) {
				if first {
					floor, err = echoSSH(srv, true)
				} else {
					ours, err = echoRemote(srv, remote())
				}
				if err != nil {
					return 0, 0, err
				}
			}
			// Where the difference goes, in the same run: ssh's own
			// round trip without a PTY, and the local sidecar against a
			// PTY driven directly (its two extra process hops).
			if noPTY, err = echoSSH(srv, false); err != nil {
				return 0, 0, err
			}
			if direct, err = echoDirect(remoteEchoSamples, 0); err != nil {
				return 0, 0, err
			}
			if sidecar, err = echoLocal(); err != nil {
				return 0, 0, err
			}
			p50 = append(p50, pair{ms(percentile(floor, 50)), ms(percentile(ours, 50))})
			p99 = append(p99, pair{ms(percentile(floor, 99)), ms(percentile(ours, 99))})
			pipe = append(pipe, pair{ms(percentile(floor, 50)), ms(percentile(noPTY, 50))})
			local = append(local, pair{ms(percentile(direct, 50)), ms(percentile(sidecar, 50))})
			return 0, 0, nil
		})
		t.add(row{name: "Remote echo p50 over ssh to 127.0.0.1 (ms; baseline: `ssh -tt 127.0.0.1 cat`)", unit: "%.3f", scale: 1, s: p50, maxRatio: ptr(1.2)})
		t.add(row{name: "Remote echo p99 over ssh to 127.0.0.1 (ms; baseline: `ssh -tt 127.0.0.1 cat`)", unit: "%.3f", scale: 1, s: p99, maxRatio: ptr(1.2)})
		t.add(row{name: "Remote echo p50, part: ssh alone without a PTY, `ssh -T 127.0.0.1 cat` (ms; baseline: `ssh -tt`)", unit: "%.3f", scale: 1, s: pipe})
		t.add(row{name: "Remote echo p50, part: the local sidecar through the Go client (ms; baseline: a PTY driven directly)", unit: "%.3f", scale: 1, s: local})
	}
	if want("throughput") {
		f, err := makeFlood(tmp, int64(*totalMiB)<<20)
		if err != nil {
			fatalf("%v", err)
		}
		run := 0
		var sshPTY, localPTY, cpuRemote, cpuLocal series
		mib := float64(f.size) / (1 << 20)
		s := measure("remote throughput", func() (float64, float64, error) {
			run++
			var b, v float64
			var cb, cv cpuUse
			var err error
			for _, first := range order(run) {
				m := cpuNow(srv.Pid())
				if first {
					b, err = throughputSSH(srv, f, false)
					cb = m.since(srv.Pid())
				} else {
					v, err = throughputRemote(srv, remote(), f)
					cv = m.since(srv.Pid())
				}
				if err != nil {
					return 0, 0, err
				}
			}
			cpuRemote = append(cpuRemote, pair{ms(cb.server) / mib, ms(cv.server) / mib})
			cpuLocal = append(cpuLocal, pair{ms(cb.local) / mib, ms(cv.local) / mib})
			// The parts, in the same run: the baseline has no PTY, the
			// terminal does. ssh with a remote PTY and nothing else, and
			// a local PTY read directly.
			p, err := throughputSSH(srv, f, true)
			if err != nil {
				return 0, 0, err
			}
			sshPTY = append(sshPTY, pair{b, p})
			l, err := plainThroughput(f, 1, true)
			if err != nil {
				return 0, 0, err
			}
			localPTY = append(localPTY, pair{b, l})
			return b, v, nil
		})
		t.add(row{name: "Remote throughput, 1 terminal, raw, over ssh (MB/s; baseline: `ssh 127.0.0.1 cat FILE`)", unit: "%.0f", scale: 1e-6,
			s: s, higherBetter: true, minRatio: ptr(0.8)})
		t.add(row{name: "Remote throughput, part: CPU per MiB at the remote end: sshd's session, the sidecar or cat, the child (ms; baseline: `ssh cat FILE`)", unit: "%.1f", scale: 1,
			s: cpuRemote})
		t.add(row{name: "Remote throughput, part: CPU per MiB at the local end: ssh and the reader, here the Go client (ms; baseline: `ssh cat FILE`)", unit: "%.1f", scale: 1,
			s: cpuLocal})
		t.add(row{name: "Remote throughput, part: ssh with a PTY, `ssh -tt 127.0.0.1 'stty raw; cat FILE'` (MB/s; baseline: `ssh cat FILE`)", unit: "%.0f", scale: 1e-6,
			s: sshPTY, higherBetter: true})
		t.add(row{name: "Remote throughput, part: a local PTY read directly, no ssh (MB/s; baseline: `ssh cat FILE`)", unit: "%.0f", scale: 1e-6,
			s: localPTY, higherBetter: true})
	}
	if want("resume") || want("keepalive") {
		var killed, detect, hung series
		run := 0
		measure("remote resume", func() (float64, float64, error) {
			run++
			r, err := resumeRemote(srv, bin, tmp, run)
			if err != nil {
				return 0, 0, err
			}
			killed = append(killed, pair{ms(r.login[0]), ms(r.killed)})
			detect = append(detect, pair{ms(remoteKeepaliveTimeout), ms(r.detect)})
			hung = append(hung, pair{ms(r.login[1]), ms(r.hung)})
			return 0, 0, nil
		})
		if want("resume") {
			t.add(row{name: "Remote resume: ssh SIGKILLed → first resumed byte (ms; baseline: login, `ssh 127.0.0.1 true`)", unit: "%.0f", scale: 1, s: killed})
		}
		if want("keepalive") {
			t.add(row{name: fmt.Sprintf("Remote hung ssh (SIGSTOP) → detected by the keepalive, every %v, timeout %v (ms; baseline: the timeout)",
				remoteKeepaliveInterval, remoteKeepaliveTimeout), unit: "%.0f", scale: 1, s: detect})
			t.add(row{name: "Remote hung ssh: detection → first resumed byte (ms; baseline: login, `ssh 127.0.0.1 true`)", unit: "%.0f", scale: 1, s: hung})
		}
	}
}

// order says which of a pair runs first in run n: the baseline (true) or
// the subject.
func order(n int) []bool {
	if n%2 == 1 {
		return []bool{true, false}
	}
	return []bool{false, true}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// echoSSH is the floor: keys through `ssh -tt host cat` (a remote PTY in
// raw mode, as the terminal's), timed from write to echo.
// With tty false it is ssh alone: `ssh -T host cat`, pipes at both ends.
func echoSSH(srv *sshtest.Server, tty bool) ([]time.Duration, error) {
	argv := srv.Command(true, "stty raw -echo; echo ready; exec cat")
	if !tty {
		argv = srv.Command(false, "echo ready; exec cat")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// A raw remote PTY takes no EOF from a closed stdin: end ssh itself.
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := waitFor(out, "ready"); err != nil {
		return nil, fmt.Errorf("ssh -tt cat: %w", err)
	}
	return echoKeys(in, out)
}

// echoRemote is the same keys through a terminal of a sidecar reached over
// ssh, through the Go client.
func echoRemote(srv *sshtest.Server, sidecar string) ([]time.Duration, error) {
	return echoThrough(client.Options{Transport: srv.Command(false, sidecar), Stderr: os.Stderr, Hello: true}, "remote terminal")
}

// echoLocal is echoRemote without ssh: the local sidecar, through the
// Go client.
func echoLocal() ([]time.Duration, error) {
	return echoThrough(client.Options{SidecarPath: *sidecarBin, Stderr: os.Stderr}, "local terminal")
}

// echoThrough times the keys through a terminal of the sidecar opts
// reaches.
func echoThrough(opts client.Options, what string) ([]time.Duration, error) {
	c, err := client.Start(opts)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	term, err := c.Open(ctx, client.OpenOptions{Cmd: "/bin/sh", Args: echoScript})
	if err != nil {
		return nil, err
	}
	defer term.Close()
	if err := waitFor(term, "ready"); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return echoKeys(term, term)
}

// waitFor reads r until it has seen s.
func waitFor(r io.Reader, s string) error {
	var seen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(seen, []byte(s)) {
		n, err := r.Read(buf)
		if err != nil {
			return err
		}
		seen = append(seen, buf[:n]...)
	}
	return nil
}

// echoKeys sends one key at a time and times its echo; the first 20 warm
// the connection up and are not counted.
func echoKeys(w io.Writer, r io.Reader) ([]time.Duration, error) {
	buf := make([]byte, 4096)
	d := make([]time.Duration, 0, remoteEchoSamples)
	for i := 0; i < remoteEchoSamples+20; i++ {
		key := []byte{'a' + byte(i%26)}
		start := time.Now()
		if _, err := w.Write(key); err != nil {
			return nil, err
		}
		for {
			n, err := r.Read(buf)
			if err != nil {
				return nil, fmt.Errorf("echo %d: %w", i, err)
			}
			if n > 0 && buf[n-1] == key[0] {
				break
			}
		}
		if i >= 20 {
			d = append(d, time.Since(start))
		}
	}
	return d, nil
}

// throughputSSH: `ssh host cat FILE`, from its first byte to its end (the
// login before it is not throughput). With tty, through a remote PTY in
// raw mode: `ssh -tt host 'stty raw -echo; cat FILE'`.
func throughputSSH(srv *sshtest.Server, f flood, tty bool) (float64, error) {
	argv := srv.Command(false, "cat "+shellQuote(f.path))
	if tty {
		argv = srv.Command(true, "stty raw -echo; exec cat "+shellQuote(f.path))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	n, d, err := timedDrain(out)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return 0, err
	}
	if n != f.size {
		return 0, fmt.Errorf("ssh cat: %d of %d bytes", n, f.size)
	}
	return float64(n) / d.Seconds(), nil
}

// throughputRemote: the same file catted in raw mode in a terminal of a
// sidecar over ssh, read through the Go client with the default window,
// from the first byte to the terminal's end.
func throughputRemote(srv *sshtest.Server, sidecar string, f flood) (float64, error) {
	c, err := client.Start(client.Options{Transport: srv.Command(false, sidecar), Stderr: os.Stderr, Hello: true})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	term, err := c.Open(ctx, client.OpenOptions{Cmd: "/bin/sh", Args: f.script(true)})
	if err != nil {
		return 0, err
	}
	n, d, err := timedDrain(term)
	if err != nil {
		return 0, err
	}
	if n != f.size {
		return 0, fmt.Errorf("remote terminal: %d of %d bytes", n, f.size)
	}
	return float64(n) / d.Seconds(), nil
}

// timedDrain reads r to its end; the time runs from the first byte.
func timedDrain(r io.Reader) (int64, time.Duration, error) {
	buf := make([]byte, 256<<10)
	var n int64
	var start time.Time
	for {
		k, err := r.Read(buf)
		if k > 0 && n == 0 {
			start = time.Now()
		}
		n += int64(k)
		if err == io.EOF {
			return n, time.Since(start), nil
		}
		if err != nil {
			return n, 0, err
		}
	}
}

type resumeFigures struct {
	killed, detect, hung time.Duration
	login                [2]time.Duration
}

// resumeRemote measures one run of the resume rows: a persistent sidecar
// over ssh, one terminal printing a line every 10 ms (parked while
// detached, so that nothing is lost), read continuously. The ssh client is
// SIGKILLed: the time to the first byte through the new connection. Then
// it is SIGSTOPped (hung, not dead): the keepalive's detection, and from
// there the first resumed byte. Each is preceded by a login of its own.
func resumeRemote(srv *sshtest.Server, bin, tmp string, run int) (resumeFigures, error) {
	var r resumeFigures
	rt := filepath.Join(tmp, fmt.Sprint("remote-persist-", run))
	if err := os.MkdirAll(rt, 0o700); err != nil {
		return r, err
	}
	env := append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+rt)
	if *sidecarEnv != "" {
		env = append(env, strings.Fields(*sidecarEnv)...)
	}
	defer func() {
		stop := exec.Command(bin, "--persist", "bench", "--stop")
		stop.Env = env
		stop.Run()
	}()
	remote := fmt.Sprintf("PTYPLEX_RUNTIME_DIR=%s exec %s --persist bench", shellQuote(rt), shellQuote(bin))
	if *sidecarEnv != "" {
		remote = fmt.Sprintf("exec env PTYPLEX_RUNTIME_DIR=%s %s %s --persist bench", shellQuote(rt), *sidecarEnv, shellQuote(bin))
	}
	events := make(chan client.Event, 16)
	c, err := client.Start(client.Options{
		Transport: srv.Command(false, remote),
		Stderr:    os.Stderr,
		Reconnect: &client.ReconnectPolicy{
			InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, Attempts: 20,
			KeepaliveInterval: remoteKeepaliveInterval, KeepaliveTimeout: remoteKeepaliveTimeout,
			OnEvent: func(e client.Event) {
				select {
				case events <- e:
				default:
				}
			},
		},
	})
	if err != nil {
		return r, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	term, err := c.Open(ctx, client.OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "while :; do echo tick; sleep 0.01; done"}, Detached: "park"})
	if err != nil {
		return r, err
	}
	defer term.Close()
	rd := newTimedReader(term)

	// arrival waits for the first byte past what the terminal had received
	// when the drop was noticed: the first one the new connection carried.
	arrival := func() (time.Time, error) {
		recv := received(term)
		return rd.past(recv, 30*time.Second)
	}
	next := func(kind client.EventKind) (time.Time, error) {
		deadline := time.After(30 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Kind == kind {
					return time.Now(), nil
				}
				if e.Kind == client.EventGaveUp {
					return time.Time{}, fmt.Errorf("gave up: %v", e.Err)
				}
			case <-deadline:
				return time.Time{}, fmt.Errorf("no %v event", kind)
			}
		}
	}
	login := func() (time.Duration, error) {
		argv := srv.Command(false, "true")
		start := time.Now()
		err := exec.Command(argv[0], argv[1:]...).Run()
		return time.Since(start), err
	}
	settle := func() error {
		// A few ticks through the current connection first.
		_, err := rd.past(rd.total()+20, 30*time.Second)
		return err
	}

	if err := settle(); err != nil {
		return r, err
	}
	if r.login[0], err = login(); err != nil {
		return r, err
	}
	killedAt := time.Now()
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		return r, err
	}
	if _, err := next(client.EventDisconnected); err != nil {
		return r, err
	}
	at, err := arrival()
	if err != nil {
		return r, err
	}
	r.killed = at.Sub(killedAt)
	if _, err := next(client.EventReconnected); err != nil {
		return r, err
	}

	if err := settle(); err != nil {
		return r, err
	}
	if r.login[1], err = login(); err != nil {
		return r, err
	}
	pid := c.Pid()
	stoppedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return r, err
	}
	// The client SIGKILLs the transport once the keepalive gives up on
	// it; should it not, the stopped ssh must not outlive the run.
	defer syscall.Kill(pid, syscall.SIGKILL)
	detected, err := next(client.EventDisconnected)
	if err != nil {
		return r, err
	}
	r.detect = detected.Sub(stoppedAt)
	at, err = arrival()
	if err != nil {
		return r, err
	}
	r.hung = at.Sub(detected)
	if _, err := next(client.EventReconnected); err != nil {
		return r, err
	}
	return r, nil
}

// received is what term had received: read so far plus buffered, taken
// when no read moved between them.
func received(term *client.Terminal) uint64 {
	for {
		a := term.Offset()
		b := term.Buffered()
		if term.Offset() == a {
			return a + uint64(b)
		}
	}
}

// timedReader drains a terminal from a goroutine of its own, noting when
// its byte count passed each mark asked for.
type timedReader struct {
	mu    sync.Mutex
	cond  sync.Cond
	n     uint64
	times []mark // every read: when and the count after it
	err   error
}

type mark struct {
	at time.Time
	n  uint64
}

func newTimedReader(r io.Reader) *timedReader {
	t := &timedReader{}
	t.cond.L = &t.mu
	go func() {
		buf := make([]byte, 64<<10)
		for {
			k, err := r.Read(buf)
			now := time.Now()
			t.mu.Lock()
			t.n += uint64(k)
			if k > 0 {
				t.times = append(t.times, mark{now, t.n})
			}
			if err != nil {
				t.err = err
			}
			t.cond.Broadcast()
			t.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return t
}

func (t *timedReader) total() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// past returns when the count first went past n.
func (t *timedReader) past(n uint64, bound time.Duration) (time.Time, error) {
	expired := false
	timer := time.AfterFunc(bound, func() {
		t.mu.Lock()
		expired = true
		t.cond.Broadcast()
		t.mu.Unlock()
	})
	defer timer.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.n <= n && t.err == nil && !expired {
		t.cond.Wait()
	}
	if t.n <= n {
		if t.err != nil {
			return time.Time{}, t.err
		}
		return time.Time{}, fmt.Errorf("no byte past offset %d within %v", n, bound)
	}
	i, _ := slices.BinarySearchFunc(t.times, n+1, func(m mark, v uint64) int {
		if m.n < v {
			return -1
		}
		if m.n > v {
			return 1
		}
		return 0
	})
	return t.times[i].at, nil
}

// cpuUse is CPU time (user and system) spent by each end of a remote run.
type cpuUse struct {
	// local: this process and the children it reaped (the ssh clients);
	// server: what the test sshd reaped, its sessions with what they
	// reaped in turn (cat, the sidecar and its terminals' children).
	local, server time.Duration
}

type cpuMark cpuUse

func cpuNow(sshd int) cpuMark {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return cpuMark{
		local:  tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime),
		server: reapedCPU(sshd),
	}
}

// since is the CPU used from m to now. sshd reaps a session a moment
// after its client saw the end: the mark is taken after a pause.
func (m cpuMark) since(sshd int) cpuUse {
	time.Sleep(200 * time.Millisecond)
	n := cpuNow(sshd)
	return cpuUse{local: n.local - m.local, server: n.server - m.server}
}

// reapedCPU is the CPU time of pid's reaped children (cutime + cstime in
// /proc/PID/stat, in clock ticks of 10 ms); 0 where there is no /proc.
func reapedCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0
	}
	var cu, cs int64
	fmt.Sscan(f[13], &cu)
	fmt.Sscan(f[14], &cs)
	return time.Duration(cu+cs) * 10 * time.Millisecond
}
