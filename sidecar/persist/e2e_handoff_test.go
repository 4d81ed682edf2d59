//go:build linux

package persist_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/sshtest"
	"github.com/ptyplex/ptyplex/proto"
	"golang.org/x/sys/unix"
)

// pipedBridge is a bridge started on pipes the test made, so that it
// knows them: in is the write end of the bridge's stdin, out the read
// end of its stdout, inPipe and outPipe what /proc shows for them.
type pipedBridge struct {
	t               *testing.T
	cmd             *exec.Cmd
	in, out         *os.File
	inPipe, outPipe string
	r               *proto.Reader
	stderr          *syncBuffer
	exited          chan struct{}
	err             error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// pipeName is what /proc/PID/fd shows for a descriptor of f's pipe.
func pipeName(t *testing.T, f *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("pipe:[%d]", st.Ino)
}

// bridge starts `ptyplex-sidecar --persist NAME` with stdin given (nil:
// a pipe) and stdout a pipe.
func (s *server) pipedBridge(stdin *os.File, env ...string) *pipedBridge {
	t := s.t
	t.Helper()
	b := &pipedBridge{t: t, stderr: &syncBuffer{}, exited: make(chan struct{})}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b.out, b.outPipe = outR, pipeName(t, outR)
	b.r = proto.NewReader(outR)
	var inR *os.File
	if stdin == nil {
		inR, b.in, err = os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		b.inPipe = pipeName(t, b.in)
		stdin = inR
	}
	b.cmd = exec.Command(sidecarBin, "--persist", s.name)
	b.cmd.Env = append(append([]string(nil), s.env...), env...)
	b.cmd.Stdin, b.cmd.Stdout, b.cmd.Stderr = stdin, outW, b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	if inR != nil {
		inR.Close()
	}
	go func() {
		b.err = b.cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.exited
		if b.in != nil {
			b.in.Close()
		}
		b.out.Close()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", b.stderr.String())
		}
	})
	return b
}

func (b *pipedBridge) send(typ proto.Type, v any) {
	b.t.Helper()
	if err := proto.WriteFrame(b.in, typ, proto.Marshal(v)); err != nil {
		b.t.Fatalf("to the bridge: %v", err)
	}
}

// next reads frames until one of type typ.
func (b *pipedBridge) next(typ proto.Type) proto.Frame {
	b.t.Helper()
	b.out.SetReadDeadline(time.Now().Add(hosttest.Timeout))
	for {
		f, err := b.r.ReadFrame()
		if err != nil {
			b.t.Fatalf("waiting for %v from the bridge: %v", typ, err)
		}
		if f.Type == typ {
			return f
		}
	}
}

// ping sends PING and waits for its PONG: the bridge serves.
func (b *pipedBridge) ping() {
	b.t.Helper()
	b.send(proto.TypePing, map[string]int{"seq": 7})
	if f := b.next(proto.TypePong); string(f.Body) != `{"seq":7}` {
		b.t.Fatalf("PONG %s", f.Body)
	}
}

// wait waits for the bridge to exit and returns its status and the last
// line of its stderr.
func (b *pipedBridge) wait() (int, string) {
	b.t.Helper()
	select {
	case <-b.exited:
	case <-time.After(hosttest.Timeout):
		b.t.Fatalf("the bridge did not exit within %v", hosttest.Timeout)
	}
	code := b.cmd.ProcessState.ExitCode()
	lines := strings.Split(strings.TrimSpace(b.stderr.String()), "\n")
	return code, lines[len(lines)-1]
}

// fds returns what each of pid's descriptors is (readlink of /proc/PID/fd/N).
func fds(t *testing.T, pid int) map[string]bool {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil {
			out[l] = true
		}
	}
	return out
}

// The bridge hands the host's pipes to the server: once the host is
// served, the bridge holds neither of them (its descriptors 0 and 1 are
// /dev/null), the server holds both, frames go through, and the host
// closing its end ends the bridge with status 0 and nothing on stderr.
// With PTYPLEX_BRIDGE_COPY=1 the bridge copies as it did before: it
// keeps both pipes and the server holds neither.
func TestHandoffServerHoldsTheHostsPipes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			var env []string
			if mode == "copy" {
				env = append(env, bridgeCopyEnv)
			}
			b := s.pipedBridge(nil, env...)
			b.ping()
			bridge, server := b.cmd.Process.Pid, s.pid()
			holds := func(pid int) (in, out bool) {
				f := fds(t, pid)
				return f[b.inPipe], f[b.outPipe]
			}
			handed := strings.Contains(s.log(), fmt.Sprintf("its bridge (pid %d) handed over", bridge))
			if handed != (mode == "handoff") {
				t.Fatalf("the server's log says the bridge handed over: %v; want %v", handed, mode == "handoff")
			}
			if mode == "handoff" {
				waitFor(t, "the bridge lets the host's pipes go", func() bool {
					in, out := holds(bridge)
					return !in && !out
				})
				if in, out := holds(server); !in || !out {
					t.Fatalf("the server holds the host's stdin: %v, stdout: %v; want both", in, out)
				}
			} else {
				if in, out := holds(bridge); !in || !out {
					t.Fatalf("the copying bridge holds the host's stdin: %v, stdout: %v; want both", in, out)
				}
				if in, out := holds(server); in || out {
					t.Fatalf("the server holds the host's stdin: %v, stdout: %v; want neither", in, out)
				}
			}
			b.send(proto.TypeOpen, map[string]any{"terminalId": "e", "cols": 80, "rows": 24,
				"cmd": "/bin/sh", "args": []string{"-c", "echo handed-over"}})
			var got []byte
			for !bytes.Contains(got, []byte("handed-over")) {
				_, data, _ := proto.ParseData(b.next(proto.TypeOutput).Body)
				got = append(got, data...)
			}
			b.next(proto.TypeExit)
			b.in.Close()
			if code, last := b.wait(); code != 0 || last != "" {
				t.Fatalf("after the host closed stdin: exit %d, stderr %q; want 0 and nothing", code, last)
			}
			// The host's stdout ends with the bridge: nobody holds it.
			b.out.SetReadDeadline(time.Now().Add(hosttest.Timeout))
			if _, err := io.Copy(io.Discard, b.out); err != nil {
				t.Fatalf("the host's stdout did not end: %v", err)
			}
		})
	}
}

// A host that sends what is not a frame (a zero or oversized length, a
// stream that ends inside a frame) ends its bridge with status 1 and the
// reason, the same line whether the bridge handed the host's pipes over
// or copies (a copying bridge exited 0 and said nothing: the server saw
// only the end of the frames it was sent), and its terminals are
// detached, not ended.
func TestHandoffCorruptStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		bytes []byte
		close bool // the host closes its stdin after them
		want  string
	}{
		{"zero", []byte{0, 0, 0, 0, 0}, false, "zero frame length"},
		{"oversized", []byte{1, 0, 0, 1, byte(proto.TypeInput)}, false, "frame length 16777217 exceeds the 16777216 byte limit"},
		{"cut", []byte{100, 0, 0, 0, byte(proto.TypeInput), 'a', 'b'}, true, "stream ended inside an INPUT frame (2 of 99 body bytes)"},
	}
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			var env []string
			if mode == "copy" {
				env = append(env, bridgeCopyEnv)
			}
			for _, c := range cases {
				b := s.pipedBridge(nil, env...)
				b.send(proto.TypeOpen, map[string]any{"terminalId": c.name, "cols": 80, "rows": 24, "cmd": "sleep", "args": []string{"100"}})
				b.next(proto.TypeOpened)
				if _, err := b.in.Write(c.bytes); err != nil {
					t.Fatal(err)
				}
				if c.close {
					b.in.Close()
				}
				want := "ptyplex-sidecar: from the host: corrupt frame stream: " + c.want
				if code, last := b.wait(); code != 1 || last != want {
					t.Fatalf("%s: exit %d, last line %q; want 1 and %q", c.name, code, last, want)
				}
				waitDetached(t, s.host(), c.name)
			}
		})
	}
}

// A host that died (its stdout's read end closed) while a terminal floods
// ends its bridge with status 1 and the reason; the terminal goes on,
// detached.
func TestHandoffDeadHost(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	b := s.pipedBridge(nil)
	b.send(proto.TypeOpen, map[string]any{"terminalId": "y", "cols": 80, "rows": 24, "cmd": "yes"})
	b.next(proto.TypeOutput)
	b.out.Close()
	code, last := b.wait()
	if code != 1 || !strings.Contains(last, "to the host") || !strings.Contains(last, "broken pipe") {
		t.Fatalf("exit %d, last line %q; want 1 saying the host stopped reading (broken pipe)", code, last)
	}
	h := s.host()
	l := waitDetached(t, h, "y")
	if e, ok := entry(l, "y"); !ok || e.Exited {
		t.Fatalf("terminal y after its host died: %+v", e)
	}
}

// A bridge killed while its host still runs ends the host's connection:
// the server closes the host's pipes (the host reads the end of its
// stdout) and detaches its terminals, as when a copying bridge dies.
func TestHandoffBridgeKilled(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	b := s.pipedBridge(nil)
	b.send(proto.TypeOpen, map[string]any{"terminalId": "z", "cols": 80, "rows": 24, "cmd": "sleep", "args": []string{"100"}})
	b.next(proto.TypeOpened)
	b.cmd.Process.Signal(syscall.SIGKILL)
	b.wait()
	b.out.SetReadDeadline(time.Now().Add(hosttest.Timeout))
	if _, err := io.Copy(io.Discard, b.out); err != nil {
		t.Fatalf("the host's stdout did not end after its bridge was killed: %v", err)
	}
	waitDetached(t, s.host(), "z")
}

// A host whose bridge handed its pipes over and which then stopped
// reading is shut down when another host takes its terminal over: the
// new host's ATTACH is answered, and the hung bridge ends with status 1.
func TestHandoffTakeoverFromHungHost(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	hung := s.pipedBridge(nil)
	hung.send(proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "cmd": "yes", "journal": 256 << 10})
	hung.next(proto.TypeOpened) // and nothing more is read
	h := s.host()
	waitWriteStuck(t, h, "f")
	h.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "f", Offset: 0})
	h.WaitControl(proto.TypeAttached, "f")
	h.WaitOutput("f", "y\r\ny\r\n")
	code, line := hung.wait()
	if code != 1 || !strings.Contains(line, "to the host") {
		t.Fatalf("the hung host's bridge: exit %d, last line %q; want 1 saying the host took no frames", code, line)
	}
}

// A holder that stopped reading and then lets its terminal go itself,
// with DETACH or by handing it to a viewer, is shut down as after a
// takeover: the write to it that the terminal's reader is stuck in would
// otherwise freeze the terminal (no reading on while detached) and keep
// the next holder's ATTACHED queued behind it for as long as the link
// hangs. Before, the viewer handed the terminal got no ATTACHED, and a
// host attaching the detached terminal none either, until the hung host
// read again.
func TestHungHolderDetachOrHandOver(t *testing.T) {
	t.Parallel()
	for _, handOver := range []bool{false, true} {
		t.Run(map[bool]string{false: "detach", true: "hand-over"}[handOver], func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			hung := s.pipedBridge(nil)
			hung.send(proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "cmd": "yes", "journal": 256 << 10})
			hung.next(proto.TypeOpened) // and nothing more is read
			h := s.host()
			var viewer float64
			if handOver {
				h.SendJSON(proto.TypeAttach, viewAttach("f", 0, nil))
				viewer = h.WaitControl(proto.TypeAttached, "f").Fields["viewer"].(float64)
			}
			waitWriteStuck(t, h, "f")
			var mark int
			if handOver {
				hung.send(proto.TypeDetach, map[string]any{"terminalId": "f", "to": viewer})
				sn := h.MustUntil("the handed-over ATTACHED", func(sn hosttest.Snapshot) bool {
					for _, c := range sn.Controls("f") {
						if c.Type == proto.TypeAttached && c.Fields["mode"] == "hold" {
							return true
						}
					}
					return false
				})
				mark = len(sn.Output("f"))
			} else {
				hung.send(proto.TypeDetach, proto.Close{TerminalID: "f"})
				l := listUntil(t, h, "f detached", func(l proto.Listed) bool {
					e, _ := entry(l, "f")
					return !e.Attached
				})
				e, _ := entry(l, "f")
				h.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "f", Offset: e.Produced})
				h.WaitControl(proto.TypeAttached, "f")
				mark = len(h.Now().Output("f"))
			}
			// The terminal reads on, for its new holder.
			h.MustUntil("output for the new holder", func(sn hosttest.Snapshot) bool {
				return len(sn.Output("f")) > mark+64<<10
			})
			code, line := hung.wait()
			if code != 1 || !strings.Contains(line, "to the host") {
				t.Fatalf("the hung host's bridge: exit %d, last line %q; want 1 saying the host took no frames", code, line)
			}
		})
	}
}

// A holder's own DETACH does not end its connection, however long the
// host then pauses its reading: only another connection's need of the
// terminal (TestHungHolderDetachOrHandOver) makes a write stuck behind it
// a hung link. A slow link, read all along, with a large write under way
// when its host detaches one terminal must not lose the others.
func TestDetachOfAPausedHostKeepsItsConnection(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	paused := s.pipedBridge(nil)
	paused.send(proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "cmd": "yes", "journal": 256 << 10})
	paused.next(proto.TypeOpened) // and nothing more is read for now
	h := s.host()
	waitWriteStuck(t, h, "f")
	paused.send(proto.TypeDetach, proto.Close{TerminalID: "f"})
	// Detached, and still no frame taken, for well past takeoverGrace.
	var last uint64
	var since time.Time
	listUntil(t, h, "f detached for 1 s", func(l proto.Listed) bool {
		e, _ := entry(l, "f")
		if e.Attached || e.Produced != last {
			last, since = e.Produced, time.Now()
			return false
		}
		return time.Since(since) >= time.Second
	})
	// It reads again: what was queued, its DETACHED, and a PONG.
	paused.send(proto.TypePing, map[string]int{"seq": 7})
	paused.out.SetReadDeadline(time.Now().Add(hosttest.Timeout))
	for pong, detached := false, false; !pong || !detached; {
		f, err := paused.r.ReadFrame()
		if err != nil {
			t.Fatalf("the paused host, reading again (PONG %v, DETACHED %v): %v", pong, detached, err)
		}
		pong = pong || f.Type == proto.TypePong
		detached = detached || f.Type == proto.TypeDetached
	}
	select {
	case <-paused.exited:
		t.Fatalf("the paused host's bridge exited: %s", paused.stderr.String())
	default:
	}
}

// A host whose bridge handed its pipes over and which then stopped
// reading does not hold up --stop: the server shuts it down after
// takeoverGrace, as its own end of the connection, so the bridge exits 0
// and quietly, as after any STOP.
func TestHandoffHungHostAtStop(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	hung := s.pipedBridge(nil)
	hung.send(proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "cmd": "yes", "journal": 256 << 10})
	hung.next(proto.TypeOpened) // and nothing more is read
	waitWriteStuck(t, s.host(), "f")
	start := time.Now()
	if out, err := s.run("--stop"); err != nil {
		t.Fatalf("--stop: %v\n%s", err, out)
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("--stop took %v with a hung host", took)
	}
	if code, stderr := hung.wait(); code != 0 || stderr != "" {
		t.Fatalf("the hung host's bridge: exit %d, stderr %q; want 0 and nothing, as after a STOP", code, stderr)
	}
}

// A bridge whose stdin is a terminal copies (the server would make the
// terminal's open file non-blocking, which the user's shell shares): it
// keeps the terminal, which stays in blocking mode, and frames still go
// through.
func TestHandoffTTYFallsBack(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	master, slave := openPTY(t)
	b := s.pipedBridge(slave)
	slave.Close()
	b.in = master
	b.ping()
	bridge := b.cmd.Process.Pid
	tty, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", bridge))
	if err != nil || !strings.HasPrefix(tty, "/dev/pts/") {
		t.Fatalf("the bridge's stdin is %q (%v); want the terminal it was given", tty, err)
	}
	if !fds(t, bridge)[b.outPipe] {
		t.Fatalf("the bridge let its stdout go")
	}
	if fds(t, s.pid())[b.outPipe] {
		t.Fatalf("the server holds the host's stdout")
	}
	info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/0", bridge))
	if err != nil {
		t.Fatal(err)
	}
	var flags int64
	for _, l := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			flags, _ = strconv.ParseInt(strings.TrimSpace(v), 8, 64)
		}
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Fatalf("the terminal was made non-blocking (flags %o)", flags)
	}
}

// openPTY opens a terminal pair in raw mode, so that frames cross it
// unchanged.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	// cfmakeraw
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	tio.Cflag &^= unix.CSIZE | unix.PARENB
	tio.Cflag |= unix.CS8
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, s
}

// Over ssh the bridge is the same code: the descriptors sshd gives it
// (pipes or a socket pair) go to the server, which then serves the host
// through sshd directly.
func TestHandoffOverSSH(t *testing.T) {
	t.Parallel()
	sshd := sshtest.Start(t)
	s := newServer(t)
	runtimeDir := strings.TrimPrefix(s.env[len(s.env)-1], "PTYPLEX_RUNTIME_DIR=")
	argv := sshd.Command(false, "env PTYPLEX_RUNTIME_DIR="+runtimeDir+" "+sidecarBin+" --persist "+s.name)
	h := hosttest.StartCmd(t, exec.Command(argv[0], argv[1:]...))
	h.Open(proto.Open{TerminalID: "r", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo over-ssh"}})
	h.WaitOutput("r", "over-ssh")
	if !strings.Contains(s.log(), "handed over") {
		t.Fatalf("the bridge over ssh did not hand its descriptors over; the server's log:\n%s", s.log())
	}
	h.CloseStdin()
	if code, err := h.WaitExit(hosttest.Timeout); code != 0 || err != nil {
		t.Fatalf("ssh after the host closed stdin: exit %d (%v); stderr:\n%s", code, err, h.Stderr())
	}
}
