package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
)

// hostileEnv names the behaviour when the test binary runs as a stand-in
// sidecar: a peer that breaks the protocol in one chosen way, reached as a
// transport the way a remote sidecar would be.
const hostileEnv = "PTYPLEX_TEST_HOSTILE"

// runHostile is the stand-in: it reads the host's frames and answers them
// according to mode. It ends when the host closes its stdin.
func runHostile(mode string) int {
	r := proto.NewReader(os.Stdin)
	w := os.Stdout
	send := func(t proto.Type, v any) { proto.WriteFrame(w, t, proto.Marshal(v)) }
	output := func(id string, data []byte) { w.Write(proto.AppendDataFrame(nil, proto.TypeOutput, id, data)) }
	var trickling atomic.Bool
	var seenMu sync.Mutex
	seen := ""                     // the INPUT read during a trickle
	release := make(chan struct{}) // closed once seen ends in trickleRelease
	var released sync.Once
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return 0
		}
		switch f.Type {
		case proto.TypeHello:
			switch mode {
			case "old":
				// Drops it, as a sidecar before the handshake does.
			case "oldchatty":
				// Drops it, but says something else: a frame of a
				// type this host does not know, which it skips.
				w.Write(proto.AppendFrame(nil, proto.Type(0x7e), []byte("{}")))
			case "newer":
				w.Write(proto.AppendFrame(nil, proto.TypeHelloReply, []byte(
					`{"version":"v9.0.0","protocol":1,"features":["hello","signal","teleport"],"os":"plan9","arch":"mips","since":"later"}`)))
			case "otherprotocol":
				send(proto.TypeHelloReply, proto.Hello{Version: "v9.0.0", Protocol: 2})
			case "garbagehello":
				w.Write(proto.AppendFrame(nil, proto.TypeHelloReply, []byte("\x00not json")))
			case "errorhello":
				send(proto.TypeError, proto.Error{Message: "unknown frame type 0x10"})
			case "junk":
				w.Write([]byte("SSH-2.0-OpenSSH\r\nPermission denied (publickey).\r\n"))
			case "deafpersist":
				// A persistent sidecar's answer from a transport
				// whose input has failed while its output stays
				// open: every write after the handshake fails, and
				// nothing ends the host's reading.
				os.Stdin.Close()
				send(proto.TypeHelloReply, proto.Hello{Version: "v", Protocol: proto.ProtocolVersion, Features: []string{proto.FeatureHello, proto.FeaturePersist}})
				time.Sleep(time.Minute)
				return 0
			}
		case proto.TypeInput:
			if mode == "trickle16" && trickling.Load() {
				_, data, _ := proto.ParseData(f.Body)
				seenMu.Lock()
				seen += string(data)
				if strings.HasSuffix(seen, trickleRelease) {
					released.Do(func() { close(release) })
				}
				seenMu.Unlock()
			}
		case proto.TypeOpen:
			o, _ := proto.ParseOpen(f.Body)
			send(proto.TypeOpened, proto.Opened{TerminalID: o.TerminalID, PID: 4242})
			switch mode {
			case "overcredit":
				output(o.TerminalID, make([]byte, *o.Credit))
				output(o.TerminalID, []byte("x"))
			case "stranger":
				output("never-opened", []byte("boo"))
			case "arrayexit":
				w.Write(proto.AppendFrame(nil, proto.TypeExit, []byte("[1,2]")))
			case "exittwice":
				code := 0
				send(proto.TypeExit, proto.Exit{TerminalID: o.TerminalID, ExitCode: &code})
				send(proto.TypeExit, proto.Exit{TerminalID: o.TerminalID, ExitCode: &code})
			case "trickle":
				// A 16 MiB frame in tiny writes until the host hangs up
				// (it should, at the header).
				head, payload := bigOutput(o.TerminalID)
				trickle(w, head, payload, nil)
			case "trickle16":
				// The same frame within the terminal's credit: the host
				// must take all of it and stay usable while it comes.
				// The keys terminal is opened first; while the frame
				// trickles in from a goroutine, this loop reads on and
				// notes the INPUT that arrived. Half way the trickle
				// holds until the test writes trickleRelease to keys, so
				// the frame is still incomplete while the test writes,
				// however fast or slow the machine. Afterwards: the INPUT
				// seen during the trickle echoed to keys, then an EXIT
				// for keys twice.
				if o.TerminalID != "big" {
					continue
				}
				trickling.Store(true)
				go func() {
					head, payload := bigOutput("big")
					trickle(w, head, payload, func() { <-release })
					trickling.Store(false)
					seenMu.Lock()
					during := seen
					seenMu.Unlock()
					output("keys", []byte("during the trickle: "+during))
					code := 0
					send(proto.TypeExit, proto.Exit{TerminalID: "keys", ExitCode: &code})
					send(proto.TypeExit, proto.Exit{TerminalID: "keys", ExitCode: &code})
				}()
			case "oversize":
				var hdr [5]byte
				binary.LittleEndian.PutUint32(hdr[:], proto.MaxFrame+1)
				hdr[4] = byte(proto.TypeOutput)
				w.Write(hdr[:])
			}
		}
	}
}

// bigOutput is the start of an OUTPUT frame for id of the largest size
// there is (its header and the terminal id) and the number of payload
// bytes that follow, all zero. The frame is never built whole: three
// 16 MiB copies under the race detector on a loaded machine delayed its
// first byte by seconds, which the tests then counted against the host.
func bigOutput(id string) (head []byte, payload int) {
	payload = proto.MaxFrame - 1 - 2 - len(id)
	head = binary.LittleEndian.AppendUint32(nil, proto.MaxFrame)
	head = append(head, byte(proto.TypeOutput))
	head = binary.LittleEndian.AppendUint16(head, uint16(len(id)))
	return append(head, id...), payload
}

// trickle writes the frame bigOutput describes in tiny pieces, each its
// own write(2), until a write fails: the first trickleBytes bytes (the
// header and the start of the body) one at a time, the rest trickleChunk
// at a time, so that a 16 MiB frame comes in tens of thousands of reads
// and not sixteen million (which took minutes of CPU under -race on a
// loaded machine and could outlast any bound). hold, when not nil, runs
// once half the frame is out.
func trickle(w io.Writer, head []byte, payload int, hold func()) {
	const trickleBytes, trickleChunk = 64 << 10, 512
	var zeros [trickleChunk]byte
	total := len(head) + payload
	for i := 0; i < total; {
		if hold != nil && i >= total/2 {
			hold()
			hold = nil
		}
		n := 1
		if i >= trickleBytes {
			n = min(trickleChunk, total-i)
		}
		piece := zeros[:n]
		if i < len(head) {
			piece = head[i : i+1]
		}
		if _, err := w.Write(piece); err != nil {
			return
		}
		i += n
	}
}

// trickleRelease, written to the keys terminal, lets trickle16's held
// frame go on.
const trickleRelease = "go;"

// startHostile runs the stand-in in mode through Options.Transport.
func startHostile(t *testing.T, mode string, hello bool) (*Client, error) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	c, err := Start(Options{
		Transport:    []string{exe, "-test.run=^$"},
		Env:          append(os.Environ(), hostileEnv+"="+mode),
		Stderr:       testLog{t},
		Hello:        hello,
		HelloTimeout: 2 * time.Second,
	})
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func TestHelloCurrentSidecar(t *testing.T) {
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: testLog{t}, Hello: true})
	require.NoError(t, err)
	defer c.Close()
	peer, ok := c.Peer()
	require.True(t, ok)
	assert.Equal(t, proto.ProtocolVersion, peer.Protocol)
	assert.True(t, peer.Has(proto.FeatureHello))
	assert.True(t, peer.Has(proto.FeatureSignal))
	assert.NotEmpty(t, peer.OS)
	// The connection serves terminals after the handshake as before.
	term := open(t, c, OpenOptions{Cmd: "sh", Args: []string{"-c", "echo after-hello"}})
	out, _ := collect(term).waitEnd(t)
	assert.Contains(t, out, "after-hello")
}

func TestHelloOldSidecar(t *testing.T) {
	start := time.Now()
	_, err := startHostile(t, "old", true)
	require.ErrorIs(t, err, ErrNoHello)
	assert.Less(t, time.Since(start), 10*time.Second, "bounded by HelloTimeout")
	assert.Contains(t, err.Error(), "older than the handshake")
	assert.Contains(t, err.Error(), "ptyplex remote install")

	// Without the handshake the same old sidecar serves terminals.
	c, err := startHostile(t, "old", false)
	require.NoError(t, err)
	term := open(t, c, OpenOptions{Cmd: "sh"})
	assert.Equal(t, 4242, term.Pid())
	assert.Equal(t, c.Pid() > 0, true, "Pid is the transport's process")
}

func TestHelloNewerSidecar(t *testing.T) {
	c, err := startHostile(t, "newer", true)
	require.NoError(t, err, "unknown features and fields are not a mismatch")
	peer, _ := c.Peer()
	assert.Equal(t, "v9.0.0", peer.Version)
	assert.True(t, peer.Has("teleport"))
	assert.Equal(t, "plan9", peer.OS)
}

func TestHelloMismatches(t *testing.T) {
	for mode, want := range map[string]string{
		"otherprotocol": "speaks protocol 2",
		"garbagehello":  "malformed answer",
		"errorhello":    `answered HELLO with ERROR "unknown frame type 0x10"`,
		"junk":          "corrupt frame stream",
	} {
		t.Run(mode, func(t *testing.T) {
			_, err := startHostile(t, mode, true)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
			assert.NotErrorIs(t, err, ErrNoHello, "answered, if badly: not taken for an old sidecar")
		})
	}
}

// TestHostileSidecar: every violation ends the connection with an error
// that names it, promptly, and the client stays usable (calls return).
func TestHostileSidecar(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]struct {
		err  error
		text string
	}{
		"overcredit": {ErrProtocol, "1 bytes of OUTPUT with only 0 of the 4096 byte credit window left"},
		"stranger":   {ErrProtocol, `OUTPUT for terminal "never-opened", which is not open`},
		"arrayexit":  {proto.ErrCorrupt, "EXIT body: the body is an array, not a JSON object"},
		"exittwice":  {ErrProtocol, "EXIT for terminal"},
		"trickle":    {ErrProtocol, " bytes of OUTPUT with only 4096 of the 4096 byte credit window left"},
		"oversize":   {proto.ErrCorrupt, "exceeds the 16777216 byte limit"},
	} {
		t.Run(mode, func(t *testing.T) {
			c, err := startHostile(t, mode, false)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			term, err := c.Open(ctx, OpenOptions{Cmd: "sh", Window: 4096})
			if err == nil && mode != "exittwice" {
				_, werr := term.Wait()
				require.Error(t, werr)
				assert.ErrorIs(t, werr, ErrSidecarGone)
			}
			select {
			case <-c.Done():
			case <-time.After(waitBound):
				t.Fatal("the connection did not end")
			}
			require.ErrorIs(t, c.Err(), want.err)
			assert.Contains(t, c.Err().Error(), want.text)
			// A context of its own: the first Open's may be spent by now
			// on a loaded machine, and an Open that waited for it to
			// expire would not be failing at once.
			later, cancelLater := context.WithTimeout(context.Background(), waitBound)
			defer cancelLater()
			_, err = c.Open(later, OpenOptions{Cmd: "sh"})
			assert.ErrorIs(t, err, ErrSidecarGone, "later opens fail at once")
			if mode == "exittwice" {
				assert.True(t, strings.Contains(c.Err().Error(), "which is not open"))
			}
		})
	}
}

// trickleBound bounds the tests of a 16 MiB frame written in tiny pieces:
// a few seconds on an idle 2-core machine, more under load or -race.
const trickleBound = 3 * time.Minute

// A frame announced at 16 MiB for a terminal granted 4 KiB is refused at
// its header: the connection ends while the stand-in has written a few
// bytes of it, not after 16 MiB of them were buffered.
func TestHostileTrickleRefusedAtHeader(t *testing.T) {
	t.Parallel()
	c, err := startHostile(t, "trickle", false)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	start := time.Now()
	term, err := c.Open(ctx, OpenOptions{ID: "t1", Cmd: "sh", Window: 4096})
	require.NoError(t, err)
	select {
	case <-c.Done():
	case <-time.After(waitBound):
		t.Fatal("the 16 MiB frame was not refused at its header")
	}
	took := time.Since(start)
	require.ErrorIs(t, c.Err(), ErrProtocol)
	assert.Contains(t, c.Err().Error(), fmt.Sprintf(`terminal "t1": %d bytes of OUTPUT with only 4096 of the 4096 byte credit window left`, proto.MaxFrame-1-2-2))
	_, werr := term.Wait()
	assert.ErrorIs(t, werr, ErrSidecarGone)
	assert.Zero(t, term.Buffered())
	t.Logf("refused %v after the OPEN", took)
}

// A 16 MiB frame within the credit, written in tiny pieces (every piece
// its own write): the client takes all of it, and while it trickles in
// the client stays usable (writes to another terminal complete, and the
// stand-in reads them meanwhile; it holds the frame half way until the
// last of them). The EXIT sent twice afterwards is reported as the
// violation it is.
func TestHostileTrickledFrame(t *testing.T) {
	t.Parallel()
	c, err := startHostile(t, "trickle16", false)
	require.NoError(t, err)
	keys := open(t, c, OpenOptions{ID: "keys", Cmd: "sh"})
	keysOut := collect(keys)
	start := time.Now()
	big := open(t, c, OpenOptions{ID: "big", Cmd: "sh", Window: proto.MaxFrame})
	var got atomic.Int64
	drained := make(chan error, 1)
	go func() {
		p := make([]byte, 1<<20)
		for {
			n, err := big.Read(p)
			got.Add(int64(n))
			if err != nil {
				drained <- err
				return
			}
		}
	}()
	// Meanwhile: writes to the other terminal return at once, and what
	// the terminal had received is all there.
	for i := 0; i < 5; i++ {
		w := time.Now()
		_, err := keys.Write([]byte(fmt.Sprintf("k%d;", i)))
		require.NoError(t, err)
		assert.Less(t, time.Since(w), time.Second, "a write during the trickle")
	}
	assert.Zero(t, got.Load(), "the frame was still trickling while the writes went out")
	_, err = keys.Write([]byte(trickleRelease))
	require.NoError(t, err)
	want := int64(proto.MaxFrame - 1 - 2 - len("big"))
	select {
	case <-c.Done():
	case <-time.After(trickleBound):
		t.Fatalf("the trickled frame did not arrive within %v (%d of %d bytes read)", trickleBound, got.Load(), want)
	}
	t.Logf("16 MiB trickled in %v", time.Since(start))
	require.ErrorIs(t, c.Err(), ErrProtocol)
	assert.Contains(t, c.Err().Error(), `EXIT for terminal "keys", which is not open`)
	select {
	case <-drained:
	case <-time.After(waitBound):
		t.Fatal("the big terminal did not end")
	}
	assert.Equal(t, want, got.Load(), "the whole frame's payload, delivered")
	out, _ := keysOut.waitEnd(t)
	assert.Equal(t, "during the trickle: k0;k1;k2;k3;k4;"+trickleRelease, out, "the keys written during the trickle reached the stand-in meanwhile")
}

// The transport's stderr reaches the logger line by line, marked.
func TestTransportStderrMarked(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- string(b)
	}()
	c, err := Start(Options{Transport: []string{"sh", "-c", "echo one >&2; printf 'two\\nthree' >&2; exec cat >/dev/null"}, Stderr: pw})
	require.NoError(t, err)
	require.NoError(t, c.Close()) // waits for the process, and so for its stderr to be copied
	pw.Close()
	select {
	case s := <-got:
		assert.Equal(t, "transport sh: one\ntransport sh: two\ntransport sh: three", s)
	case <-time.After(waitBound):
		t.Fatal("stderr not copied")
	}
}

// What the other side writes to stderr reaches the local terminal with its
// control characters escaped: no clipboard write, title or cursor move gets
// through.
func TestTransportStderrEscaped(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- string(b)
	}()
	script := `printf 'a\033]52;c;aGk=\007b\033]0;title\007\r\n\342\200\242 ok\233\n' >&2; exec cat >/dev/null`
	c, err := Start(Options{Transport: []string{"sh", "-c", script}, Stderr: pw})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	pw.Close()
	select {
	case s := <-got:
		assert.Equal(t, "transport sh: a\\e]52;c;aGk=\\ab\\e]0;title\\a\ntransport sh: \u2022 ok\\x9b\n", s, "ssh's CR LF ends a line: the CR is dropped, not shown")
	case <-time.After(waitBound):
		t.Fatal("stderr not copied")
	}
}

// A character cut between two writes arrives whole, not as two escaped
// halves; a line cut anywhere comes out the same as in one write.
func TestLinePrefixerSplitWrites(t *testing.T) {
	in := "x\u2022y\x1b[2J\nz\U0001F600\nw\r\nv\rv\n"
	var whole strings.Builder
	(&linePrefixer{w: &whole, prefix: "> ", start: true}).Write([]byte(in))
	for i := 1; i < len(in); i++ {
		var b strings.Builder
		l := &linePrefixer{w: &b, prefix: "> ", start: true}
		l.Write([]byte(in[:i]))
		l.Write([]byte(in[i:]))
		if b.String() != whole.String() {
			t.Errorf("cut at %d: %q, want %q", i, b.String(), whole.String())
		}
	}
	if want := "> x\u2022y\\e[2J\n> z\U0001F600\n> w\n> v\\rv\n"; whole.String() != want {
		t.Errorf("%q, want %q", whole.String(), want)
	}
}

// A transport that fails (ssh refused, host unknown) ends the handshake at
// once with its exit status; what it said is in the log, marked.
func TestHelloFailingTransport(t *testing.T) {
	log := &syncWriter{b: &strings.Builder{}}
	start := time.Now()
	_, err := Start(Options{Transport: []string{"sh", "-c", "echo 'Permission denied (publickey).' >&2; exit 255"}, Stderr: log, Hello: true})
	require.ErrorIs(t, err, ErrSidecarGone)
	assert.Contains(t, err.Error(), "exit status 255")
	assert.NotErrorIs(t, err, ErrNoHello, "not taken for an old sidecar")
	assert.Less(t, time.Since(start), DefaultHelloTimeout, "no wait for the timeout")
	assert.Contains(t, log.String(), "transport sh: Permission denied (publickey).")
	// The error names the transport, and what it said last.
	assert.Contains(t, err.Error(), "the transport (sh) exited: exit status 255: Permission denied (publickey).")
}

// A transport that gives back not one byte (ssh still connecting to a
// host that drops its packets) is not taken for an old sidecar alone: the
// error says the transport may not have got through, with what it said.
func TestHelloSilentTransport(t *testing.T) {
	log := &syncWriter{b: &strings.Builder{}}
	_, err := Start(Options{Transport: []string{"sh", "-c", "printf 'connecting to 10.255.255.1\\r\\n' >&2; exec sleep 60"},
		Stderr: log, Hello: true, HelloTimeout: 300 * time.Millisecond})
	require.ErrorIs(t, err, ErrNoReply)
	require.ErrorIs(t, err, ErrNoHello)
	msg := err.Error()
	assert.Contains(t, msg, "has not reached the sidecar")
	assert.Contains(t, msg, "unreachable")
	assert.Contains(t, msg, `it said last: "connecting to 10.255.255.1"`)
	assert.Equal(t, "transport sh: connecting to 10.255.255.1\n", log.String())

	// A sidecar that talks, but does not answer HELLO, is an old one.
	_, err = startHostile(t, "oldchatty", true)
	require.ErrorIs(t, err, ErrNoHello)
	assert.NotErrorIs(t, err, ErrNoReply)
	assert.Contains(t, err.Error(), "older than the handshake")
}

// With Reconnect, a first connection that fails is Start's error, not
// retried: nothing was there to resume.
func TestReconnectFirstConnectionFails(t *testing.T) {
	ev := newEvents()
	_, err := Start(Options{Transport: []string{"sh", "-c", "echo 'Connection refused' >&2; exit 255"}, Stderr: testLog{t},
		Reconnect: &ReconnectPolicy{OnEvent: ev.on}})
	require.ErrorIs(t, err, ErrSidecarGone)
	assert.Contains(t, err.Error(), "the first connection failed, which Reconnect does not retry")
	assert.Contains(t, err.Error(), "Connection refused")
	ev.mu.Lock()
	assert.Empty(t, ev.all, "no Disconnected: nothing was connected")
	ev.mu.Unlock()
}
