//go:build unix

package persist_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// Ring mode: while nobody holds the terminal its oldest bytes fall out of
// the journal, and ATTACH says exactly how many of the requested bytes
// are gone, then repaints with SNAPSHOT and goes on from its offset.
func TestRingReportsLostExactly(t *testing.T) {
	t.Parallel()
	const journal = 8192
	s := newServer(t)
	h1 := s.host()
	h1.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "r", "cols": 40, "rows": 10, "cmd": "/bin/sh",
		"args": []string{"-c", "stty -echo; echo ready; read x; yes | head -c 100000; echo end"}, "journal": journal})
	h1.WaitOutput("r", "ready\r\n")
	h1.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "r"})
	d := h1.WaitControl(proto.TypeDetached, "r")
	if !strings.Contains(d.Raw, "detached as asked") {
		t.Fatalf("DETACHED %s", d.Raw)
	}
	have := len(h1.Now().Output("r"))
	// Input now comes from a connection that does not hold it: refused.
	before := len(h1.Now().Frames)
	h1.Input("r", "go\n")
	h1.WaitControl(proto.TypeError, "r")
	h2 := s.host()
	// Attach, start the flood, detach, and wait for it to end unread.
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "r", "offset": have})
	h2.WaitControl(proto.TypeAttached, "r")
	h2.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "r"})
	h2.Input("r", "go\n") // after DETACH: refused too, and not typed
	h2.WaitControl(proto.TypeError, "r")
	if _, ok := controlAfter(h1.Now(), before, proto.TypeOutput, "r"); ok {
		t.Fatal("the first host got output after its DETACH")
	}
	// Nothing was typed, so nothing flows: now type it for real. With a
	// credit window smaller than the flood, so that the flood cannot all
	// reach this host before its DETACH is read, and its EXIT with it:
	// unthrottled, a server slow to read that DETACH (CI under load)
	// sent the host everything, and the terminal was gone.
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "r", "offset": have, "credit": 1024})
	h2.Input("r", "go\n")
	h2.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "r"})
	// The flood is 100000 "y\n" bytes (150000 through the PTY) and "end".
	total := uint64(have + 150000 + len("end\r\n"))
	l := listUntil(t, h2, "the flood to end unread", func(l proto.Listed) bool {
		e, _ := entry(l, "r")
		return e.Exited
	})
	e, _ := entry(l, "r")
	got := h2.Now().Output("r")
	if e.Produced != total {
		t.Fatalf("produced %d, want %d", e.Produced, total)
	}
	// Room is made in steps of a sixteenth of the journal, so it keeps
	// between 15/16 of it and all of it.
	if e.Start < total-journal || e.Start > total-journal+journal/16 {
		t.Fatalf("journal starts at %d, want %d..%d (a full ring of %d)", e.Start, total-journal, total-journal+journal/16, journal)
	}
	off := uint64(have + len(got))
	h3 := s.host()
	h3.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "r", "offset": off})
	at := h3.WaitControl(proto.TypeAttached, "r")
	if want := float64(e.Start - off); at.Fields["lost"] != want {
		t.Fatalf("ATTACHED %s, want lost %v", at.Raw, want)
	}
	sn := h3.WaitControl(proto.TypeSnapshot, "r")
	if sn.Fields["offset"] != float64(total) || !strings.Contains(sn.Fields["data"].(string), "y\r\ny\r\nend") {
		t.Fatalf("SNAPSHOT %s", truncate(sn.Raw, 300))
	}
	h3.WaitControl(proto.TypeExit, "r")
	if out := h3.Now().Output("r"); out != "" {
		t.Fatalf("OUTPUT after a SNAPSHOT at the end: %q", out)
	}
}

// parkHold is how long TestParkLosesNothing leaves a parked flood with
// no host: long enough that a journal that leaked room would show it.
const parkHold = 10 * time.Second

// Park mode: with no host, the child blocks once the journal is full,
// stays blocked for parkHold with nothing dropped, and a host that comes
// back loses nothing.
func TestParkLosesNothing(t *testing.T) {
	t.Parallel()
	const journal = 64 << 10
	s := newServer(t)
	h1 := s.host()
	h1.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "p", "cols": 80, "rows": 24, "cmd": "yes",
		"journal": journal, "detached": "park", "credit": 4096})
	h1.MustUntil("the first 4 KiB", func(s hosttest.Snapshot) bool { return len(s.Output("p")) == 4096 })
	h1.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "p"})
	h1.WaitControl(proto.TypeDetached, "p")
	have := 4096
	h2 := s.host()
	// Wait until the journal is full: yes is blocked in write(2). Then
	// stay away for parkHold, checking that nothing falls out meanwhile.
	full := func(l proto.Listed) bool {
		e, _ := entry(l, "p")
		if e.Start != 0 {
			t.Fatalf("park dropped %d bytes with no host", e.Start)
		}
		return e.Produced-e.Start == journal
	}
	listUntil(t, h2, "the journal to fill", full)
	for end := time.Now().Add(parkHold); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !full(list(t, h2)) {
			t.Fatal("a parked terminal produced past its full journal with no host")
		}
	}
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "p", "offset": have, "credit": 16 << 10})
	autoCredit(h2, []string{"p"})
	at := h2.WaitControl(proto.TypeAttached, "p")
	if at.Fields["lost"] != float64(0) {
		t.Fatalf("ATTACHED %s", at.Raw)
	}
	out := h2.MustUntil("1 MiB more", func(s hosttest.Snapshot) bool { return len(s.Output("p")) >= 1<<20 }).Output("p")
	all := h1.Now().Output("p") + out
	if want := bytes.Repeat([]byte("y\r\n"), len(all)/3+1)[:len(all)]; !bytes.Equal([]byte(all), want) {
		t.Fatal("the stream across the detach is not yes's output, byte for byte")
	}
	h2.SendJSON(proto.TypeClose, proto.Close{TerminalID: "p"})
	h2.WaitControl(proto.TypeExit, "p")
}

// Bad input gets a clear ERROR and changes nothing.
func TestBadAttachAndForeignInput(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h1 := s.host()
	h1.Open(proto.Open{TerminalID: "b", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h1.WaitControl(proto.TypeOpened, "b")
	h1.Input("b", "one\n")
	h1.WaitOutput("b", "one\r\none\r\n")
	h2 := s.host()
	cases := []struct {
		body string
		want string
	}{
		{`{"terminalId":"nope","offset":0}`, `no terminal \"nope\"`},
		{`{"terminalId":"b","offset":1000000}`, `offset 1000000 is past the 10 bytes`},
		{`{"terminalId":"b","offset":-1}`, `-1 is not a whole number`},
		{`{"terminalId":"b","offset":1.5}`, `1.5 is not a whole number`},
		{`{"terminalId":"b","offset":"3"}`, `\"3\" is not a whole number`},
		{`{"terminalId":"b"}`, `offset: missing`},
		{`{"terminalId":"b","offset":1e3}`, `1e3 is not a whole number`},
	}
	for _, c := range cases {
		before := len(h2.Now().Frames)
		h2.Send(proto.TypeAttach, []byte(c.body))
		sn := h2.MustUntil("ERROR for "+c.body, func(s hosttest.Snapshot) bool {
			for _, f := range s.Frames[before:] {
				if f.Type == proto.TypeError {
					return true
				}
			}
			return false
		})
		var msg string
		for _, f := range sn.Frames[before:] {
			if f.Type == proto.TypeError {
				msg = string(f.Body)
			}
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("ATTACH %s: ERROR %s, want it to say %q", c.body, msg, c.want)
		}
	}
	// INPUT, RESIZE and CLOSE from a connection that does not hold it.
	for _, f := range []struct {
		typ  proto.Type
		body []byte
	}{
		{proto.TypeInput, mustData("b", "evil\n")},
		{proto.TypeResize, proto.Marshal(proto.Resize{TerminalID: "b", Cols: 10, Rows: 10})},
		{proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "b"})},
	} {
		before := len(h2.Now().Frames)
		h2.Send(f.typ, f.body)
		sn := h2.MustUntil("ERROR", func(s hosttest.Snapshot) bool {
			_, ok := controlAfter(s, before, proto.TypeError, "b")
			return ok
		})
		m, _ := controlAfter(sn, before, proto.TypeError, "b")
		if !strings.Contains(m["message"].(string), "another connection holds it") {
			t.Errorf("%v from a non-holder: ERROR %v", f.typ, m)
		}
	}
	// Nothing changed: the first host still holds b, and it still works.
	if e, _ := entry(list(t, h2), "b"); !e.Attached || e.Produced != 10 || e.Cols != 80 {
		t.Fatalf("after the refused frames: %+v", e)
	}
	h1.Input("b", "two\n")
	h1.WaitOutput("b", "two\r\ntwo\r\n")
	if strings.Contains(h1.Now().Output("b"), "evil") {
		t.Fatal("input from the other connection reached the terminal")
	}
	// A takeover: the first host is told, the second gets everything.
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "b", "offset": 0})
	d := h1.WaitControl(proto.TypeDetached, "b")
	if !strings.Contains(d.Raw, "taken over") {
		t.Fatalf("DETACHED %s", d.Raw)
	}
	h2.WaitOutput("b", "one\r\none\r\ntwo\r\ntwo\r\n")
}

func mustData(id, s string) []byte {
	b, err := proto.DataBody(id, []byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
