//go:build unix

package persist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/ptyplex/ptyplex/proto"
)

// maxFuzzOpens bounds the children one fuzz input may spawn.
const maxFuzzOpens = 3

// FuzzServerDispatch sends an arbitrary host stream to a persistent
// server on a real Unix socket and checks what the protocol promises
// whatever a host sends: the server answers with whole frames only, ends
// that connection without hanging, and goes on serving others (a second
// connection's PING and LIST are answered, and it shuts down). To keep it
// harmless and fast, every OPEN that would succeed runs /bin/true instead
// of what it asks for, at most maxFuzzOpens of them do, and STOP and
// UPGRADE (which end or replace the server) are left out.
func FuzzServerDispatch(f *testing.F) {
	open := func(id, extra string) []byte {
		return proto.AppendFrame(nil, proto.TypeOpen, []byte(`{"terminalId":"`+id+`","cols":80,"rows":24,"cmd":"sh"`+extra+`}`))
	}
	ctl := func(t proto.Type, body string) []byte { return proto.AppendFrame(nil, t, []byte(body)) }
	seq := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f.Add(seq(ctl(proto.TypeHello, `{"client":"fuzz","protocol":1}`), open("a", ""),
		proto.AppendDataFrame(nil, proto.TypeInput, "a", []byte("hi\r")),
		ctl(proto.TypeResize, `{"terminalId":"a","cols":100,"rows":30}`), ctl(proto.TypeList, `{}`),
		ctl(proto.TypeDetach, `{"terminalId":"a"}`), ctl(proto.TypeAttach, `{"terminalId":"a","offset":0}`),
		ctl(proto.TypeClose, `{"terminalId":"a"}`)))
	f.Add(seq(open("b", `,"credit":0`), ctl(proto.TypeCredit, `{"terminalId":"b","bytes":10}`), open("b", ""),
		ctl(proto.TypeAttach, `{"terminalId":"b","mode":"view"}`), ctl(proto.TypeDetach, `{"terminalId":"b","to":7}`)))
	f.Add(seq(ctl(proto.TypeAttach, `{"terminalId":"nope","offset":"12"}`), ctl(proto.TypeAttach, `{"terminalId":"x","offset":-1}`),
		ctl(proto.TypeRevive, `{"terminalId":"x"}`), ctl(proto.TypeRevive, `{`), ctl(proto.TypeList, `[`)))
	f.Add(seq(open("c", `,"cwd":"/nonexistent"`), open("", ""), ctl(proto.TypeOpen, `{"terminalId":"x",`),
		ctl(proto.TypeHandoff, ``), ctl(0x7f, "future")))
	f.Add(seq(open("d", `,"orphanMs":1`), ctl(proto.TypePing, `abc`), []byte{0, 0, 0, 0, 1}))
	f.Add(seq(open("e", ""), ctl(proto.TypeSignal, `{"terminalId":"e","signal":"SIGINT"}`),
		ctl(proto.TypeForeground, `{"terminalId":"e"}`), ctl(proto.TypeCredit, `{"terminalId":"e","bytes":-1}`), []byte{9, 0, 0}))
	f.Fuzz(serverDispatchOne)
}

func serverDispatchOne(t *testing.T, stream []byte) {
	{
		in := harmless(stream)
		s := New(Options{OrphanTimeout: -1})
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		hang := time.AfterFunc(30*time.Second, func() {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			panic(fmt.Sprintf("the server hangs on input %q\n%s", in, buf[:n]))
		})
		defer hang.Stop()

		// The fuzzed connection: its answers are read while it is
		// written (a server that blocks on a host that does not read
		// is not what this checks), and it must end once we do.
		a := dialServer(t, ln)
		replies := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(a)
			replies <- b
		}()
		a.Write(in) // the server may have ended the connection already
		a.CloseWrite()
		if err := wholeFrames(<-replies); err != nil {
			t.Fatalf("%v\ninput %q", err, in)
		}
		a.Close()

		// Another connection is served.
		b := dialServer(t, ln)
		defer b.Close()
		b.Write(proto.AppendFrame(nil, proto.TypePing, []byte(`{"seq":"after"}`)))
		b.Write(proto.AppendFrame(nil, proto.TypeList, []byte("{}")))
		r := proto.NewReader(b)
		for _, want := range []proto.Type{proto.TypePong, proto.TypeListed} {
			for {
				fr, err := r.ReadFrame()
				if err != nil {
					t.Fatalf("a second connection, waiting for %v: %v\ninput %q", want, err, in)
				}
				if fr.Type == want {
					if want == proto.TypePong && string(fr.Body) != `{"seq":"after"}` {
						t.Fatalf("PONG %s for PING {\"seq\":\"after\"}", fr.Body)
					}
					break
				}
				if fr.Type != proto.TypeError { // nothing else is this connection's
					t.Fatalf("a second connection got %v %s before %v\ninput %q", fr.Type, fr.Body, want, in)
				}
			}
		}
		s.Shutdown()
	}
}

func dialServer(t *testing.T, ln *net.UnixListener) *net.UnixConn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// harmless re-encodes the host stream with every OPEN that parses turned
// into /bin/true (OPENs beyond maxFuzzOpens, STOP and UPGRADE dropped).
// A corrupt tail is kept as it is.
func harmless(stream []byte) []byte {
	r := proto.NewReader(bytes.NewReader(stream))
	var out []byte
	consumed, opens := 0, 0
	for {
		fr, err := r.ReadFrame()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, stream[consumed:]...)
		}
		consumed += proto.HeaderSize + len(fr.Body)
		switch fr.Type {
		case proto.TypeStop, proto.TypeUpgrade:
			continue
		case proto.TypeOpen:
			if o, err := proto.ParseOpen(fr.Body); err == nil {
				if opens++; opens > maxFuzzOpens {
					continue
				}
				o.Cmd, o.Args = "/bin/true", nil
				fr.Body = proto.Marshal(o)
			}
		}
		out = proto.AppendFrame(out, fr.Type, fr.Body)
	}
}

// wholeFrames checks that b is a stream of whole frames whose control
// bodies are JSON.
func wholeFrames(b []byte) error {
	r := proto.NewReader(bytes.NewReader(b))
	for {
		fr, err := r.ReadFrame()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the server wrote a corrupt stream: %v", err)
		}
		switch fr.Type {
		case proto.TypeOutput, proto.TypePong:
		default:
			if !json.Valid(fr.Body) {
				return fmt.Errorf("%v with a body that is not JSON: %q", fr.Type, fr.Body)
			}
		}
	}
}

// TestStopEndsTheTerminals: after Stop, no goroutine of a terminal is
// left waiting for a host that will never come. A terminal that was
// detached when the server stopped is kept for a host until then (its
// EXIT unread), and its pump waited on after the server was gone, one
// goroutine and a journal for every such terminal, for as long as the
// process lasted: FuzzServerDispatch grew by one a run, and by a
// terminal, its journal and its server kept by a 24-hour timer.
func TestStopEndsTheTerminals(t *testing.T) {
	s := New(Options{OrphanTimeout: -1})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	c := dialServer(t, ln)
	fs := frames(t, c)
	send(t, c, proto.TypeOpen, map[string]any{"terminalId": "kept", "cols": 80, "rows": 24, "cmd": "cat"})
	next(t, fs, proto.TypeOpened)
	c.Close()
	term := s.lookup("kept")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(time.Millisecond) {
		term.mu.Lock()
		detached := term.holder == nil
		term.mu.Unlock()
		if detached {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the terminal is still attached to a closed connection")
		}
	}
	s.Shutdown()
	pump := fmt.Sprintf("persist.(*term).pump(%p", term)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(time.Millisecond) {
		buf := make([]byte, 1<<22)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, pump) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal's pump still waits 15 s after Stop:\n%s", stacks)
		}
	}
	// Nor does a timer keep it (and its journal) until it fires: the
	// keep-exited clock a detach started after Stop held it for 24 h.
	w := weak.Make(term)
	term, s = nil, nil
	for deadline := time.Now().Add(15 * time.Second); w.Value() != nil; time.Sleep(time.Millisecond) {
		runtime.GC()
		if time.Now().After(deadline) {
			t.Fatal("the terminal is still reachable 15 s after Stop and the server let go")
		}
	}
}
