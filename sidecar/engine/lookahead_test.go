package engine

import (
	"io"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// During a wait the look-ahead applies a CREDIT for a terminal that
// exists at once, keeps one behind an OPEN of its id (it is the new
// terminal's), keeps PING and every other frame, and the dispatch loop
// gets the kept frames in the order they were sent, then reads on.
func TestLookaheadAppliesCreditsAndKeepsTheRestInOrder(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	tried := make(chan string, 16) // every CREDIT Grant was asked about
	var granted []string           // under the Lookahead's lock, read after WaitEnds
	la := NewLookahead(LookaheadHooks{
		Read: proto.NewReader(pr).ReadFrame,
		Grant: func(f proto.Frame, before []Read) bool {
			m, err := proto.ParseCredit(f.Body)
			if err != nil {
				t.Errorf("CREDIT %q: %v", f.Body, err)
				return false
			}
			defer func() { tried <- m.TerminalID }()
			if m.TerminalID != "x" && m.TerminalID != "y" || Names(before, m.TerminalID, proto.TypeOpen) {
				return false
			}
			granted = append(granted, m.TerminalID)
			return true
		},
	})
	frame := func(typ proto.Type, v any) []byte { return proto.AppendFrame(nil, typ, proto.Marshal(v)) }
	credit := func(id string) []byte { return frame(proto.TypeCredit, proto.Credit{TerminalID: id, Bytes: 10}) }
	input := func(s string) []byte { return proto.AppendDataFrame(nil, proto.TypeInput, "x", []byte(s)) }
	send := func(frames ...[]byte) {
		go func() {
			for _, f := range frames {
				if _, err := pw.Write(f); err != nil {
					return
				}
			}
		}()
	}
	expect := func(typ proto.Type, body string) {
		t.Helper()
		r := la.Next()
		if r.Err != nil || r.Frame.Type != typ || (body != "" && string(r.Frame.Body) != body) {
			t.Fatalf("got frame %v %q (error %v), want %v %q", r.Frame.Type, r.Frame.Body, r.Err, typ, body)
		}
	}
	expectTried := func(id string) {
		t.Helper()
		select {
		case got := <-tried:
			if got != id {
				t.Fatalf("Grant asked about a CREDIT for %q, want %q", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the CREDIT for %q was not read during the wait", id)
		}
	}

	send(input("a"))
	expect(proto.TypeInput, string(input("a")[5:]))
	la.WaitBegins()
	ping := frame(proto.TypePing, map[string]int{"seq": 1})
	send(ping, credit("x"), credit("nobody"), frame(proto.TypeOpen, proto.Open{TerminalID: "y"}), credit("y"), input("b"))
	expectTried("x")
	expectTried("nobody")
	expectTried("y")
	la.WaitEnds()
	if len(granted) != 1 || granted[0] != "x" {
		t.Fatalf("granted during the wait: %v, want only x's", granted)
	}
	expect(proto.TypePing, string(ping[5:]))
	expect(proto.TypeCredit, string(credit("nobody")[5:]))
	expect(proto.TypeOpen, "")
	expect(proto.TypeCredit, string(credit("y")[5:]))
	expect(proto.TypeInput, string(input("b")[5:]))
	send(input("c"))
	expect(proto.TypeInput, string(input("c")[5:]))
	pw.Close()
	if r := la.Next(); r.Err != io.EOF {
		t.Fatalf("after the end: %v %v, want io.EOF", r.Frame.Type, r.Err)
	}
}
