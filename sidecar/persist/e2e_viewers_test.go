//go:build linux

package persist_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// floodAfterLine is sh's arguments for a program that floods only once a line is typed: the
// viewers attach at offset 0 before it has produced a byte.
func floodAfterLine(lines int) []string {
	return []string{"-c", "read x; exec seq 1 " + strconv.Itoa(lines)}
}

func viewAttach(id string, offset uint64, credit *uint64) proto.Attach {
	return proto.Attach{TerminalID: id, Offset: offset, Credit: credit, Mode: proto.AttachView}
}

func sum(b []byte) [32]byte { return sha256.Sum256(b) }

// collector reads a piped bridge's frames in a goroutine of its own,
// keeping the OUTPUT of one terminal and its SNAPSHOT, until its EXIT:
// the hosttest.Host's record would copy every byte received at every
// wait, which in a flood of megabytes starves the test's hosts.
type collector struct {
	mu       sync.Mutex
	received int           // OUTPUT bytes so far, for the holder's credit (under mu)
	progress chan struct{} // if set, poked after each OUTPUT
	out      bytes.Buffer
	snap     *proto.Snapshot
	// snapAt is how much OUTPUT came before the SNAPSHOT.
	snapAt int
	err    error
	exited chan struct{}
}

func collect(b *pipedBridge, progress chan struct{}) *collector {
	c := &collector{exited: make(chan struct{}), progress: progress}
	go func() {
		defer close(c.exited)
		for {
			b.out.SetReadDeadline(time.Now().Add(4 * hosttest.Timeout))
			f, err := b.r.ReadFrame()
			if err != nil {
				c.err = err
				return
			}
			switch f.Type {
			case proto.TypeOutput:
				_, data, err := proto.ParseData(f.Body)
				if err != nil {
					c.err = err
					return
				}
				c.out.Write(data)
				if c.progress != nil {
					c.mu.Lock()
					c.received += len(data)
					c.mu.Unlock()
					select {
					case c.progress <- struct{}{}:
					default:
					}
				}
			case proto.TypeSnapshot:
				if c.snap != nil {
					c.err = fmt.Errorf("a second SNAPSHOT: %.200s", f.Body)
					return
				}
				c.snap, c.snapAt = &proto.Snapshot{}, c.out.Len()
				if err := json.Unmarshal(f.Body, c.snap); err != nil {
					c.err = err
					return
				}
			case proto.TypeExit:
				return
			case proto.TypeAttached:
			default:
				c.err = fmt.Errorf("unexpected %v %.200s", f.Type, f.Body)
				return
			}
		}
	}()
	return c
}

// wait waits for the EXIT and fails the test if anything else ended the
// stream. The collector's fields are the test's to read after it.
func (c *collector) wait(t *testing.T, who string) {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(4 * hosttest.Timeout):
		t.Fatalf("%s: no EXIT within %v", who, 4*hosttest.Timeout)
	}
	if c.err != nil {
		t.Fatalf("%s: %v", who, c.err)
	}
}

// One holder floods a terminal that three reading viewers, one viewer
// whose host never reads and one that never grants credit watch. The
// server does not hold the flood back for viewers (the bench row
// measures that the holder goes as fast with them); here the holder's
// host grants credit as its reading viewers' hosts progress, as a host
// that shows one screen to several people would, so that a viewer's
// host that gets less of this loaded machine than the holder's does not
// fall out of the journal. Every
// reading viewer receives the holder's bytes, byte for byte (SHA-256),
// and the EXIT; the holder and they finish while the other two are
// stuck; once they resume, each gets the bytes it was sent before, then
// a SNAPSHOT that says how many it lost (> 0), then exactly the holder's
// bytes from the SNAPSHOT's offset on, and the EXIT.
//
// Both bridges: the one that hands the host's pipes to the server, and
// the one that copies (the server then writes a Unix socket).
func TestViewersFloodWithStuckViewers(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var env []string
			if mode == "copy" {
				env = []string{bridgeCopyEnv}
			}
			viewersFlood(t, env)
		})
	}
}

func viewersFlood(t *testing.T, env []string) {
	// About 4.7 MB, well past the 1 MiB journal and what the stuck
	// viewer's pipe, or socket (2 MiB) and copying bridge, take in.
	// The holder starts with no credit and is paced by the reading
	// viewers (paceHolder), so that it is never sent a byte they have
	// not received: the journal drops only what the holder was sent,
	// and a reading viewer behind that (its host descheduled for a few
	// milliseconds while the reader fills the journal) would be skipped
	// forward, as the server rightly does, and the test would wait for
	// bytes it will never get.
	const lines = 600000
	const holderWindow = 0
	s := newServer(t)
	lister := s.host()
	list(t, lister)
	h := s.pipedBridge(nil, env...)
	h.send(proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "cmd": "sh",
		"args": floodAfterLine(lines), "journal": 1 << 20, "credit": holderWindow})
	h.next(proto.TypeOpened)
	progress := make(chan struct{}, 1)
	held := collect(h, progress)

	var viewers []*collector
	for range 3 {
		v := s.pipedBridge(nil, env...)
		v.send(proto.TypeAttach, viewAttach("f", 0, nil))
		at := v.next(proto.TypeAttached)
		var a proto.Attached
		if err := json.Unmarshal(at.Body, &a); err != nil || a.Mode != "view" || a.Lost != 0 || a.Viewer == 0 {
			t.Fatalf("a viewer's ATTACHED: %s", at.Body)
		}
		viewers = append(viewers, collect(v, progress))
	}
	stuck := s.pipedBridge(nil, env...) // read only once the flood is over
	stuck.send(proto.TypeAttach, viewAttach("f", 0, nil))
	stuck.next(proto.TypeAttached)
	starved := s.pipedBridge(nil, env...) // 4 KiB of credit, no more until the flood is over
	window := uint64(4096)
	starved.send(proto.TypeAttach, viewAttach("f", 0, &window))
	starved.next(proto.TypeAttached)
	starvedOut := collect(starved, nil)
	if e, _ := entry(list(t, lister), "f"); !e.Attached || len(e.Viewers) != 5 {
		t.Fatalf("LISTED: want the holder and five viewers: %+v", e)
	}

	if _, err := h.in.Write(proto.AppendDataFrame(nil, proto.TypeInput, "f", []byte("\n"))); err != nil {
		t.Fatal(err)
	}
	go paceHolder(h, held, viewers, progress)
	held.wait(t, "the holder")
	want := append([]byte("\r\n"), numberedLines(lines)...)
	if !bytes.Equal(held.out.Bytes(), want) {
		t.Fatalf("the holder received %d bytes, want %d", held.out.Len(), len(want))
	}
	for i, v := range viewers {
		v.wait(t, "viewer "+strconv.Itoa(i))
		if sum(v.out.Bytes()) != sum(want) {
			t.Errorf("viewer %d: %d bytes, SHA-256 differs from the holder's %d", i, v.out.Len(), len(want))
		}
		if v.snap != nil {
			t.Errorf("viewer %d, which reads, was sent a SNAPSHOT (lost %d)", i, v.snap.Lost)
		}
	}

	// The viewer that never read resumes.
	st := collect(stuck, nil)
	st.wait(t, "the stuck viewer")
	checkSkipped(t, "the viewer that never read", want, st)

	// The viewer that never granted credit resumes: a grant brings the
	// SNAPSHOT and the rest.
	starved.send(proto.TypeCredit, proto.Credit{TerminalID: "f", Bytes: 1 << 30})
	starvedOut.wait(t, "the starved viewer")
	if starvedOut.snapAt != int(window) {
		t.Errorf("the starved viewer received %d bytes on its %d-byte window", starvedOut.snapAt, window)
	}
	checkSkipped(t, "the starved viewer", want, starvedOut)
}

// paceHolder grants the holder credit up to what the slowest reading
// viewer received, until the holder's EXIT. Viewers are sent output as
// the server reads it, whatever the holder's credit.
func paceHolder(h *pipedBridge, held *collector, viewers []*collector, progress chan struct{}) {
	granted := 0
	for {
		select {
		case <-progress:
		case <-held.exited:
			return
		}
		slowest := -1
		for _, c := range viewers {
			c.mu.Lock()
			if slowest < 0 || c.received < slowest {
				slowest = c.received
			}
			c.mu.Unlock()
		}
		if slowest > granted {
			body := proto.Marshal(proto.Credit{TerminalID: "f", Bytes: uint64(slowest - granted)})
			if proto.WriteFrame(h.in, proto.TypeCredit, body) != nil {
				return
			}
			granted = slowest
		}
	}
}

// checkSkipped checks what a viewer that fell behind received: before
// the SNAPSHOT a prefix of held, then a loss > 0 that reaches no further
// than where it went on, then held from the SNAPSHOT's offset on.
func checkSkipped(t *testing.T, who string, held []byte, c *collector) {
	t.Helper()
	if c.snap == nil || c.snap.Lost == 0 {
		t.Fatalf("%s: no SNAPSHOT with a loss (%+v)", who, c.snap)
	}
	before, after := c.out.Bytes()[:c.snapAt], c.out.Bytes()[c.snapAt:]
	snap := c.snap
	if !bytes.HasPrefix(held, before) {
		t.Errorf("%s: its %d bytes before the SNAPSHOT are not the holder's first", who, len(before))
	}
	if snap.Offset < uint64(len(before)) || snap.Lost > snap.Offset-uint64(len(before)) {
		t.Errorf("%s: lost %d at offset %d after %d bytes", who, snap.Lost, snap.Offset, len(before))
	}
	if snap.Offset > uint64(len(held)) || !bytes.Equal(after, held[snap.Offset:]) {
		t.Errorf("%s: after the SNAPSHOT at %d: %d bytes, not the holder's from there", who, snap.Offset, len(after))
	}
}

// A viewer's INPUT, RESIZE, SIGNAL, FOREGROUND and CLOSE are refused
// with an ERROR and change nothing; the holder's still work.
func TestViewerInputRefused(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "cat"})
	h.WaitControl(proto.TypeOpened, "c")
	v := s.host()
	v.SendJSON(proto.TypeAttach, viewAttach("c", 0, nil))
	v.WaitControl(proto.TypeAttached, "c")
	v.Input("c", "secret\n")
	v.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "c", Cols: 40, Rows: 10})
	v.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "c", "signal": "SIGKILL"})
	v.SendJSON(proto.TypeForeground, proto.Close{TerminalID: "c"})
	v.SendJSON(proto.TypeClose, proto.Close{TerminalID: "c"})
	sn := v.MustUntil("five ERRORs", func(sn hosttest.Snapshot) bool {
		n := 0
		for _, c := range sn.Controls("c") {
			if c.Type == proto.TypeError {
				n++
			}
		}
		return n == 5
	})
	for _, c := range sn.Controls("c") {
		if c.Type == proto.TypeError && !strings.Contains(c.Fields["message"].(string), "only views it") {
			t.Errorf("ERROR %s: want it to say the connection only views the terminal", c.Raw)
		}
	}
	h.Input("c", "ok\n")
	h.WaitOutput("c", "ok\r\nok\r\n")
	v.WaitOutput("c", "ok\r\nok\r\n")
	e, _ := entry(list(t, h), "c")
	if e.Exited || e.Cols != 80 || e.Rows != 24 {
		t.Fatalf("a viewer's frames changed the terminal: %+v", e)
	}
	for _, out := range []string{h.Now().Output("c"), v.Now().Output("c")} {
		if strings.Contains(out, "secret") {
			t.Fatalf("the viewer's INPUT reached the program: %q", out)
		}
	}
}

// The holder hands the terminal over to a viewer (DETACH "to"): the old
// holder gets DETACHED, the viewer ATTACHED with mode "hold" and goes on
// from its own offset, missing and repeating nothing; its keys reach the
// program, the old holder's no longer do. LIST follows each step; a
// viewer's DETACH ends its view; a viewer's plain ATTACH takes over.
func TestViewerHandOverAndList(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "cat"})
	h.WaitControl(proto.TypeOpened, "c")
	h.Input("c", "one\n")
	h.WaitOutput("c", "one\r\none\r\n")
	v1, v2 := s.host(), s.host()
	v1.SendJSON(proto.TypeAttach, viewAttach("c", 0, nil))
	n1 := uint64(v1.WaitControl(proto.TypeAttached, "c").Fields["viewer"].(float64))
	v2.SendJSON(proto.TypeAttach, viewAttach("c", 5, nil))
	n2 := uint64(v2.WaitControl(proto.TypeAttached, "c").Fields["viewer"].(float64))
	v1.WaitOutput("c", "one\r\none\r\n")
	v2.WaitOutput("c", "one\r\n")
	l := listUntil(t, h, "two viewers", func(l proto.Listed) bool {
		e, _ := entry(l, "c")
		return len(e.Viewers) == 2 && e.Viewers[0].Sent == 10 && e.Viewers[1].Sent == 10
	})
	if e, _ := entry(l, "c"); !e.Attached || e.Viewers[0].Viewer != n1 || e.Viewers[1].Viewer != n2 {
		t.Fatalf("LISTED %+v: want the holder attached, viewers %d and %d", e, n1, n2)
	}

	// A DETACH "to" a number that is no viewer is refused.
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "c", "to": n1 + n2})
	if m := h.WaitControl(proto.TypeError, "c"); !strings.Contains(m.Raw, "no viewer") {
		t.Fatalf("ERROR %s", m.Raw)
	}
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "c", "to": n1})
	d := h.WaitControl(proto.TypeDetached, "c")
	if !strings.Contains(d.Raw, "handed over to viewer "+strconv.FormatUint(n1, 10)) {
		t.Fatalf("DETACHED %s", d.Raw)
	}
	at := v1.MustUntil("ATTACHED with mode hold", func(sn hosttest.Snapshot) bool {
		for _, c := range sn.Controls("c") {
			if c.Type == proto.TypeAttached && c.Fields["mode"] == "hold" {
				return true
			}
		}
		return false
	})
	for _, c := range at.Controls("c") {
		if c.Type == proto.TypeAttached && c.Fields["mode"] == "hold" && (c.Fields["offset"] != float64(10) || c.Fields["lost"] != float64(0)) {
			t.Fatalf("the handed-over ATTACHED: %s, want offset 10, lost 0", c.Raw)
		}
	}
	v1.Input("c", "two\n")
	v1.WaitOutput("c", "one\r\none\r\ntwo\r\ntwo\r\n")
	v2.WaitOutput("c", "one\r\ntwo\r\ntwo\r\n") // it asked from offset 5
	if got := v2.Now().Output("c"); got != "one\r\ntwo\r\ntwo\r\n" {
		t.Fatalf("viewer 2 received %q", got)
	}
	before := len(h.Now().Frames)
	h.Input("c", "three\n")
	h.MustUntil("the old holder's INPUT refused", func(sn hosttest.Snapshot) bool {
		m, ok := controlAfter(sn, before, proto.TypeError, "c")
		return ok && strings.Contains(m["message"].(string), "another connection holds it")
	})
	l = listUntil(t, h, "viewer 1 holds, viewer 2 views", func(l proto.Listed) bool {
		e, _ := entry(l, "c")
		return e.Attached && len(e.Viewers) == 1 && e.Viewers[0].Viewer == n2
	})

	// Viewer 2 takes the terminal over with a plain ATTACH.
	v2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "c", Offset: 20})
	v1.WaitControl(proto.TypeDetached, "c")
	v2.Input("c", "four\n")
	v2.WaitOutput("c", "four\r\nfour\r\n")
	if got := v2.Now().Output("c"); got != "one\r\ntwo\r\ntwo\r\nfour\r\nfour\r\n" {
		t.Fatalf("viewer 2, holder now, received %q", got)
	}
	listUntil(t, h, "no viewers left", func(l proto.Listed) bool {
		e, _ := entry(l, "c")
		return e.Attached && len(e.Viewers) == 0
	})

	// A viewer's DETACH ends its view.
	h.SendJSON(proto.TypeAttach, viewAttach("c", 0, nil))
	h.WaitOutput("c", "four\r\nfour\r\n")
	before = len(h.Now().Frames)
	h.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "c"})
	h.MustUntil("the viewer's DETACHED", func(sn hosttest.Snapshot) bool {
		m, ok := controlAfter(sn, before, proto.TypeDetached, "c")
		return ok && m["reason"] == "detached as asked"
	})
	listUntil(t, h, "the view ended", func(l proto.Listed) bool {
		e, _ := entry(l, "c")
		return len(e.Viewers) == 0
	})
}

// A viewer that attaches 1.9 MB behind a terminal's output catches up in
// batches (up to 1 MiB of OUTPUT frames in one write, viewers.go): it
// receives the holder's bytes whole, in order, in frames no larger than
// the protocol's. Then, the terminal idle, each line typed reaches it
// (the echo and cat's copy) as it reaches the holder: a viewer that has
// just written a large batch and rests is woken by a change of its state,
// and its rest is bounded, so an interactive terminal's next output is
// not held back (docs/persist.md gives the echo's latency). Both bridges.
func TestViewerCatchesUpInBatchesThenEchoes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var env []string
			if mode == "copy" {
				env = []string{bridgeCopyEnv}
			}
			// 1.9 MB, within the 4 MiB journal: a batch of 17 full
			// frames, then one of 11 full frames and a short one.
			const lines = 250000
			s := newServer(t)
			h := s.pipedBridge(nil, env...)
			h.send(proto.TypeOpen, map[string]any{"terminalId": "b", "cols": 80, "rows": 24, "cmd": "sh",
				"args": []string{"-c", "seq 1 " + strconv.Itoa(lines) + "; exec cat"}})
			h.next(proto.TypeOpened)
			want := numberedLines(lines)
			if got := readOutput(t, h, "the holder", "b", len(want)); !bytes.Equal(got, want) {
				t.Fatalf("the holder received %d bytes, not seq's %d", len(got), len(want))
			}
			v := s.pipedBridge(nil, env...)
			v.send(proto.TypeAttach, viewAttach("b", 0, nil))
			v.next(proto.TypeAttached)
			if got := readOutput(t, v, "the viewer", "b", len(want)); sum(got) != sum(want) {
				t.Fatalf("the viewer received %d bytes, SHA-256 differs from the holder's %d", len(got), len(want))
			}
			for i := range 20 {
				line := fmt.Sprintf("key %d\n", i)
				echo := []byte(strings.ReplaceAll(line+line, "\n", "\r\n"))
				if _, err := h.in.Write(proto.AppendDataFrame(nil, proto.TypeInput, "b", []byte(line))); err != nil {
					t.Fatal(err)
				}
				for _, b := range []struct {
					who string
					b   *pipedBridge
				}{{"the holder", h}, {"the viewer", v}} {
					if got := readOutput(t, b.b, b.who, "b", len(echo)); !bytes.Equal(got, echo) {
						t.Fatalf("%s: line %d: received %q, want %q", b.who, i, got, echo)
					}
				}
			}
		})
	}
}

// readOutput reads b's frames until n bytes of id's OUTPUT came, each in
// a whole frame within the protocol's size, and returns them; anything
// but OUTPUT, or more than n bytes, fails the test.
func readOutput(t *testing.T, b *pipedBridge, who, id string, n int) []byte {
	t.Helper()
	var got []byte
	b.out.SetReadDeadline(time.Now().Add(4 * hosttest.Timeout))
	for len(got) < n {
		f, err := b.r.ReadFrame()
		if err != nil {
			t.Fatalf("%s: after %d of %d bytes: %v", who, len(got), n, err)
		}
		if f.Type != proto.TypeOutput {
			t.Fatalf("%s: after %d of %d bytes: unexpected %v %.200s", who, len(got), n, f.Type, f.Body)
		}
		fid, data, err := proto.ParseData(f.Body)
		if err != nil || fid != id || len(f.Body) > engine.OutputFrame {
			t.Fatalf("%s: an OUTPUT frame of %d bytes for %q: %v", who, len(f.Body), fid, err)
		}
		got = append(got, data...)
	}
	if len(got) > n {
		t.Fatalf("%s: %d bytes, want %d: %q", who, len(got), n, got[n:])
	}
	return got
}
