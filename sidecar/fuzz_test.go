package sidecar

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// maxFuzzOpens bounds the children one fuzz input may spawn.
const maxFuzzOpens = 3

// FuzzDispatch runs an in-process sidecar on an arbitrary host stream and
// checks the promises of the frame protocol on what comes back. To keep
// it harmless and fast, every OPEN that would succeed runs trueCmd
// (/bin/true; cmd.exe /c exit 0 on Windows) instead of what it asks for
// (cwd and env are kept), and at most maxFuzzOpens of them do.
func FuzzDispatch(f *testing.F) {
	open := func(id string, extra string) []byte {
		return proto.AppendFrame(nil, proto.TypeOpen, []byte(`{"terminalId":"`+id+`","cols":80,"rows":24,"cmd":"sh"`+extra+`}`))
	}
	ctl := func(t proto.Type, body string) []byte { return proto.AppendFrame(nil, t, []byte(body)) }
	seq := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	f.Add(seq(open("a", ""), proto.AppendDataFrame(nil, proto.TypeInput, "a", []byte("hi\r")),
		ctl(proto.TypeResize, `{"terminalId":"a","cols":100,"rows":30}`), ctl(proto.TypeClose, `{"terminalId":"a"}`)))
	f.Add(seq(open("a", `,"credit":0`), ctl(proto.TypeCredit, `{"terminalId":"a","bytes":10}`), open("a", "")))
	f.Add(seq(open("b", `,"cwd":"/nonexistent"`), open("", ""), ctl(proto.TypeOpen, `{"terminalId":"x",`)))
	f.Add(seq(ctl(proto.TypeClose, `{`), ctl(0x7f, "future"), ctl(proto.TypeCredit, `{"terminalId":"a","bytes":-1}`)))
	f.Add(seq(open("c", ""), []byte{0, 0, 0, 0, 1}))
	f.Add(seq(open("d", ""), []byte{9, 0, 0}))
	f.Add(seq(open("e", ""), ctl(proto.TypeForeground, `{"terminalId":"e"}`), ctl(proto.TypeSignal, `{"terminalId":"e","signal":"SIGINT"}`),
		ctl(proto.TypeSignal, `{"terminalId":"e","signal":"NOPE"}`), ctl(proto.TypeSignal, `{"terminalId":"e","signal":`)))
	// Frames for ids whose spawn is still in flight: one that fails, one
	// that runs, and a duplicate OPEN of each.
	f.Add(seq(open("f", `,"cwd":"/nonexistent"`), proto.AppendDataFrame(nil, proto.TypeInput, "f", []byte("x")),
		ctl(proto.TypeResize, `{"terminalId":"f","cols":9,"rows":9}`), ctl(proto.TypeSignal, `{"terminalId":"f","signal":"NOPE"}`),
		ctl(proto.TypeForeground, `{"terminalId":"f"}`), ctl(proto.TypeClose, `{"terminalId":"f"}`), open("f", "")))
	f.Add(seq(open("g", `,"credit":0`), proto.AppendDataFrame(nil, proto.TypeInput, "g", []byte("y")),
		ctl(proto.TypeSignal, `{"terminalId":"g","signal":"NOPE"}`), ctl(proto.TypeForeground, `{"terminalId":"g"}`),
		open("g", ""), ctl(proto.TypeCredit, `{"terminalId":"g","bytes":5}`), ctl(proto.TypeClose, `{"terminalId":"g"}`)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		in, corrupt := harmless(stream)
		var out bytes.Buffer
		sc := New(&out, Options{})
		hang := time.AfterFunc(20*time.Second, func() {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			panic(fmt.Sprintf("Run hangs on input %q\n%s", in, buf[:n]))
		})
		defer hang.Stop()
		err := sc.Run(bytes.NewReader(in))
		switch {
		case corrupt && !errors.Is(err, proto.ErrCorrupt):
			t.Fatalf("corrupt input: Run returned %v", err)
		case !corrupt && err != nil:
			t.Fatalf("clean input: Run returned %v", err)
		}
		if err := checkReplies(out.Bytes()); err != nil {
			t.Fatalf("%v\ninput %q", err, in)
		}
	})
}

// harmless re-encodes the host stream with every successful OPEN turned
// into trueCmd (and OPENs beyond maxFuzzOpens dropped). A corrupt tail is
// kept as it is.
func harmless(stream []byte) (out []byte, corrupt bool) {
	r := proto.NewReader(bytes.NewReader(stream))
	consumed, opens := 0, 0
	for {
		fr, err := r.ReadFrame()
		if err == io.EOF {
			return out, false
		}
		if err != nil {
			return append(out, stream[consumed:]...), true
		}
		consumed += proto.HeaderSize + len(fr.Body)
		if fr.Type == proto.TypeOpen {
			if o, err := proto.ParseOpen(fr.Body); err == nil {
				if opens++; opens > maxFuzzOpens {
					continue
				}
				o.Cmd, o.Args = trueCmd[0], trueCmd[1:]
				fr.Body = proto.Marshal(o)
			}
		}
		out = proto.AppendFrame(out, fr.Type, fr.Body)
	}
}

// checkReplies decodes the sidecar's output and checks, per terminal id,
// that OUTPUT comes only between OPENED and EXIT, that every OPENED gets
// exactly one EXIT, and that every control body carries a valid id.
func checkReplies(b []byte) error {
	r := proto.NewReader(bytes.NewReader(b))
	live := map[string]bool{}
	for {
		fr, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("sidecar wrote a corrupt stream: %v", err)
		}
		var id string
		if fr.Type == proto.TypeHelloReply || fr.Type == proto.TypePong {
			continue // about the connection, not a terminal: no id
		}
		if fr.Type == proto.TypeOutput {
			if id, _, err = proto.ParseData(fr.Body); err != nil {
				return fmt.Errorf("bad OUTPUT body: %v", err)
			}
		} else {
			var ok bool
			if id, ok = proto.SentID(fr.Body); !ok || (fr.Type != proto.TypeError && proto.CheckID(id) != nil) {
				return fmt.Errorf("%s without a valid id: %s", fr.Type, fr.Body)
			}
		}
		switch fr.Type {
		case proto.TypeOpened:
			if live[id] {
				return fmt.Errorf("second OPENED for live %q", id)
			}
			live[id] = true
		case proto.TypeOutput, proto.TypeForegroundInfo:
			if !live[id] {
				return fmt.Errorf("%s for %q outside OPENED..EXIT", fr.Type, id)
			}
		case proto.TypeExit:
			if !live[id] {
				return fmt.Errorf("EXIT for %q without OPENED", id)
			}
			delete(live, id)
		case proto.TypeError:
		default:
			return fmt.Errorf("unexpected frame type %s", fr.Type)
		}
	}
	for id := range live {
		return fmt.Errorf("terminal %q got no EXIT", id)
	}
	return nil
}
