//go:build linux

package persist_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"

	"github.com/ptyplex/ptyplex/proto"
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
