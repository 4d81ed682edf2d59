//go:build unix

package persist_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A terminal changes hands 200 times between two hosts, in turn by a
// DETACH and a later ATTACH, by a takeover, and by a hand-over to a
// viewer, each holder taking a window of credit: the bytes they got,
// put end to end, are the program's output with none lost and none
// doubled. The pump of a terminal nobody holds ends, and is started
// again by whatever makes it the next holder's; one that was not would
// leave that holder without its ATTACHED or its output. (Park mode: the
// journal drops nothing while nobody holds it.)
func TestHoldersTakeTurnsWithoutLosingAByte(t *testing.T) {
	s := newServer(t)
	hosts := []*hosttest.Host{s.host(), s.host()}
	const window = 3000
	hosts[0].SendJSON(proto.TypeOpen, map[string]any{"terminalId": "p", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", "stty -echo; exec seq 1 100000000"}, "credit": 0, "detached": proto.DetachedPark})
	hosts[0].WaitControl(proto.TypeOpened, "p")
	var total []byte // what the holders got, in order
	holder, from := hosts[0], 0
	for i := range 200 {
		holder.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "p", Bytes: window})
		holder.MustUntil("the window's output", func(sn hosttest.Snapshot) bool { return len(sn.Outputs["p"]) >= from+window })
		next := hosts[(i+1)%2]
		before := len(holder.Now().Frames)
		total = append(total, holder.Now().Outputs["p"][from:]...)
		nextFrom := len(next.Now().Outputs["p"])
		switch i % 3 {
		case 0: // DETACH; nobody holds it until the other attaches
			holder.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "p"})
			waitDetachedAfter(holder, before)
			mustAttach(t, next, map[string]any{"terminalId": "p", "offset": len(total), "credit": 0})
		case 1: // taken over
			mustAttach(t, next, map[string]any{"terminalId": "p", "offset": len(total), "credit": 0})
			waitDetachedAfter(holder, before)
		case 2: // handed over to a viewer at the same offset
			v := mustAttach(t, next, map[string]any{"terminalId": "p", "offset": len(total), "credit": 0, "mode": proto.AttachView})
			nb := len(next.Now().Frames)
			holder.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "p", "to": v.Fields["viewer"]})
			waitDetachedAfter(holder, before)
			next.MustUntil("the hand-over's ATTACHED", func(sn hosttest.Snapshot) bool {
				_, ok := controlAfter(sn, nb, proto.TypeAttached, "p")
				return ok
			})
		}
		holder, from = next, nextFrom
	}
	lines := bytes.Split(total, []byte("\r\n"))
	for i, l := range lines[:len(lines)-1] {
		if string(l) != strconv.Itoa(i+1) {
			t.Fatalf("line %d of what the holders got is %q, want %d (%d bytes in all)", i, l, i+1, len(total))
		}
	}
	if len(total) != 200*window {
		t.Fatalf("the holders got %d bytes, want %d", len(total), 200*window)
	}
}

// mustAttach sends h's ATTACH and returns its ATTACHED.
func mustAttach(t *testing.T, h *hosttest.Host, body map[string]any) hosttest.Control {
	t.Helper()
	c := attachAnswer(t, h, body["terminalId"].(string), body)
	if c.Type != proto.TypeAttached {
		t.Fatalf("ATTACH %v: %s", body, c.Raw)
	}
	return c
}

// waitDetachedAfter waits for a DETACHED of p among h's frames after the
// first before.
func waitDetachedAfter(h *hosttest.Host, before int) {
	h.MustUntil("DETACHED", func(sn hosttest.Snapshot) bool {
		_, ok := controlAfter(sn, before, proto.TypeDetached, "p")
		return ok
	})
}
