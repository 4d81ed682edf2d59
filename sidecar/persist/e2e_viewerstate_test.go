//go:build linux

package persist_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
)

// A viewer that granted no more credit beside a holder that floods the
// terminal: the bytes that leave the journal before it was sent them are
// lost as they leave, and LIST says so while it is still stalled (lost
// and sent add up to the journal's start); its next CREDIT brings the
// SNAPSHOT, whose lost is what LIST said (the flood is over by then),
// and then the holder's bytes from the SNAPSHOT's offset.
func TestStalledViewerLossListedAtOnce(t *testing.T) {
	t.Parallel()
	const lines = 600000 // about 4.7 MB through a 1 MiB journal
	s := newServer(t)
	lister := s.host()
	list(t, lister)
	h := s.pipedBridge(nil)
	h.send(proto.TypeOpen, map[string]any{"terminalId": "f", "cols": 80, "rows": 24, "cmd": "sh",
		"args": []string{"-c", "read x; seq 1 600000; exec cat"}, "journal": 1 << 20})
	h.next(proto.TypeOpened)
	held := collect(h, make(chan struct{}, 1))

	v := s.pipedBridge(nil)
	window := uint64(4096)
	v.send(proto.TypeAttach, viewAttach("f", 0, &window))
	v.next(proto.TypeAttached)
	if _, err := h.in.Write(proto.AppendDataFrame(nil, proto.TypeInput, "f", []byte("\n"))); err != nil {
		t.Fatal(err)
	}
	want := append([]byte("\r\n"), numberedLines(lines)...)
	if got := readOutput(t, v, "the viewer", "f", int(window)); !bytes.Equal(got, want[:window]) {
		t.Fatalf("the viewer's window: %q", got)
	}

	// While the flood goes on: the loss is listed as it happens.
	listUntil(t, lister, "the stalled viewer's loss listed", func(l proto.Listed) bool {
		e, _ := entry(l, "f")
		return len(e.Viewers) == 1 && e.Viewers[0].Lost > 0
	})
	waitFor(t, "the holder's flood", func() bool {
		held.mu.Lock()
		defer held.mu.Unlock()
		return held.received >= len(want)
	})
	l := list(t, lister)
	e, _ := entry(l, "f")
	if len(e.Viewers) != 1 || e.Viewers[0].Sent != window || e.Viewers[0].Lost != e.Start-window {
		t.Fatalf("LISTED after the flood: %+v; want the viewer at %d with %d lost (the journal starts at %d)", e, window, e.Start-window, e.Start)
	}
	listed := e.Viewers[0].Lost

	v.send(proto.TypeCredit, proto.Credit{TerminalID: "f", Bytes: 1 << 30})
	v.out.SetReadDeadline(time.Now().Add(hosttest.Timeout))
	f, err := v.r.ReadFrame()
	if err != nil || f.Type != proto.TypeSnapshot {
		t.Fatalf("after the CREDIT: %v %.200s (%v), want a SNAPSHOT", f.Type, f.Body, err)
	}
	var sn proto.Snapshot
	if err := json.Unmarshal(f.Body, &sn); err != nil {
		t.Fatal(err)
	}
	if sn.Lost < listed || sn.Offset != uint64(len(want)) {
		t.Fatalf("SNAPSHOT lost %d at offset %d; LIST said %d lost, the flood ends at %d", sn.Lost, sn.Offset, listed, len(want))
	}
	if e, _ := entry(list(t, lister), "f"); len(e.Viewers) != 1 || e.Viewers[0].Lost != sn.Lost || e.Viewers[0].Sent != sn.Offset {
		t.Fatalf("LISTED after the SNAPSHOT: %+v", e)
	}
	// Then its output goes on with the holder's.
	if _, err := h.in.Write(proto.AppendDataFrame(nil, proto.TypeInput, "f", []byte("more\n"))); err != nil {
		t.Fatal(err)
	}
	if got := readOutput(t, v, "the viewer after its SNAPSHOT", "f", 12); string(got) != "more\r\nmore\r\n" {
		t.Fatalf("the viewer after its SNAPSHOT: %q", got)
	}
}

// A viewer stalled on credit, of a dead terminal (left by a server that
// died, under --journal-dir) that another connection REVIVEs: the dead
// terminal is gone, and no CREDIT of the viewer's could reach it any
// more (its id names the revived one). The viewer is skipped to its end
// at once: a SNAPSHOT of its last screen, the one the revived terminal
// shows first, then its dead EXIT, which ends the view. It was left
// waiting for ever, or sent a blank SNAPSHOT, rendered from the journal
// the dead terminal's pump had freed.
func TestStalledViewerOfARevivedTerminal(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	h := s.host("--journal-dir", jdir)
	h.Open(proto.Open{TerminalID: "sh", Cols: 80, Rows: 24, Cmd: "/bin/sh", Env: map[string]string{"PS1": "$ "}})
	h.WaitControl(proto.TypeOpened, "sh")
	h.WaitOutput("sh", "$ ")
	h.Input("sh", "echo before-mark\n")
	h.WaitOutput("sh", "before-mark\r\n$ ")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host("--journal-dir", jdir)
	dead, _ := entry(list(t, h2), "sh")
	if !dead.Dead {
		t.Fatalf("after the crash: %+v", dead)
	}
	v := s.host()
	window := uint64(4)
	v.SendJSON(proto.TypeAttach, viewAttach("sh", 0, &window))
	v.WaitControl(proto.TypeAttached, "sh")
	v.MustUntil("the viewer's window", func(sn hosttest.Snapshot) bool { return len(sn.Outputs["sh"]) == int(window) })

	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "sh"})
	h2.WaitControl(proto.TypeOpened, "sh")
	sn := v.MustUntil("the viewer's SNAPSHOT and dead EXIT", func(sn hosttest.Snapshot) bool {
		ex, ok := controlAfter(sn, 0, proto.TypeExit, "sh")
		return ok && ex["dead"] == true
	})
	snap, ok := controlAfter(sn, 0, proto.TypeSnapshot, "sh")
	if !ok {
		t.Fatalf("no SNAPSHOT before the EXIT:\n%s", hosttest.Describe(sn))
	}
	if snap["offset"] != float64(dead.Produced) || snap["lost"] != nil {
		t.Fatalf("SNAPSHOT %v: want the dead terminal's end, %d, and nothing lost (its bytes were all in the journal)", snap, dead.Produced)
	}
	got := screenText(snap["data"].(string))
	if !strings.Contains(got, "$ echo before-mark\nbefore-mark\n$") {
		t.Fatalf("the viewer's SNAPSHOT shows\n%s\n%q", got, snap["data"])
	}
	h2.MustUntil("the revived terminal showing the viewer's screen first", func(sn hosttest.Snapshot) bool {
		return strings.HasPrefix(screenText(sn.Output("sh")), got)
	})
	if len(sn.Outputs["sh"]) != int(window) {
		t.Fatalf("the viewer was sent %d bytes of OUTPUT, past its window of %d", len(sn.Outputs["sh"]), window)
	}
	// The view ended with the dead terminal: the revived one has none.
	listUntil(t, h2, "the revived terminal, unviewed", func(l proto.Listed) bool {
		e, _ := entry(l, "sh")
		return !e.Dead && e.Attached && len(e.Viewers) == 0
	})
}

// screenText is what an 80x24 screen shows after out, its blank lines
// at the end left out.
func screenText(out string) string {
	em := screen.New(80, 24, screen.Options{})
	em.Write([]byte(out))
	return strings.TrimRight(em.Text(), "\n ")
}
