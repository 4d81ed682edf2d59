//go:build unix

package persist_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// Holder generations (holdgen.go): a host that reconnects ATTACHes its
// terminals with "resume", the holdGen it was given, and takes back only
// those nobody else took since. The ATTACHes are written as raw JSON, as
// a host of any language would send them.

// holdGenOf is the holdGen of a control frame; it fails the test when
// the frame has none.
func holdGenOf(t *testing.T, c hosttest.Control) uint64 {
	t.Helper()
	g, ok := c.Fields["holdGen"].(float64)
	if !ok || g < 1 || g != float64(uint64(g)) {
		t.Fatalf("%v %s: no holdGen (a whole number from 1)", c.Type, c.Raw)
	}
	return uint64(g)
}

// attachAnswer sends ATTACH body and returns the first ATTACHED or ERROR
// about id that h receives after it.
func attachAnswer(t *testing.T, h *hosttest.Host, id string, body map[string]any) hosttest.Control {
	t.Helper()
	before := len(h.Now().Frames)
	h.SendJSON(proto.TypeAttach, body)
	var c hosttest.Control
	h.MustUntil("ATTACHED or ERROR for "+id, func(sn hosttest.Snapshot) bool {
		for _, typ := range []proto.Type{proto.TypeAttached, proto.TypeError} {
			if m, ok := controlAfter(sn, before, typ, id); ok {
				c = hosttest.Control{Type: typ, Fields: m, Raw: string(proto.Marshal(m))}
				return true
			}
		}
		return false
	})
	return c
}

// mustRefuseResume checks that an ATTACH of id with "resume": gen from h
// is refused as taken over.
func mustRefuseResume(t *testing.T, h *hosttest.Host, id string, gen uint64) {
	t.Helper()
	c := attachAnswer(t, h, id, map[string]any{"terminalId": id, "offset": 0, "resume": gen})
	want := `ATTACH refused: terminal "` + id + `" was taken over by another connection since this one held it`
	if c.Type != proto.TypeError || !strings.HasPrefix(c.Fields["message"].(string), want) {
		t.Fatalf("ATTACH with resume %d: %v %s, want ERROR %q", gen, c.Type, c.Raw, want)
	}
}

// openCat opens id running cat through h and returns its OPENED's holdGen.
func openCat(t *testing.T, h *hosttest.Host, id string) uint64 {
	t.Helper()
	h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "cat"})
	return holdGenOf(t, h.WaitControl(proto.TypeOpened, id))
}

// A opens t1 and B takes it over; A's host reconnects (A2) and resumes
// t1 with the generation A was given: refused. B still holds t1, its keys
// still reach cat, and A2 is sent nothing of t1.
func TestResumeRefusedAfterTakeover(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a, b, a2 := s.host(), s.host(), s.host()
	n := openCat(t, a, "t1")
	a.Input("t1", "one\n")
	a.WaitOutput("t1", "one\r\none\r\n")
	bAt := attachAnswer(t, b, "t1", map[string]any{"terminalId": "t1", "offset": 0})
	if bAt.Type != proto.TypeAttached {
		t.Fatalf("B's ATTACH: %v %s", bAt.Type, bAt.Raw)
	}
	m := holdGenOf(t, bAt)
	if m <= n {
		t.Fatalf("B's holdGen %d, A's %d: want B's greater", m, n)
	}
	a.WaitControl(proto.TypeDetached, "t1")

	mustRefuseResume(t, a2, "t1", n)
	b.Input("t1", "two\n")
	b.WaitOutput("t1", "one\r\none\r\ntwo\r\ntwo\r\n")
	e, _ := entry(list(t, a2), "t1") // a round trip on A2's connection
	if !e.Attached || e.HoldGen != m {
		t.Fatalf("after the refusal: %+v, want attached at holdGen %d", e, m)
	}
	if out, cs := a2.Now().Output("t1"), a2.Now().Controls("t1"); out != "" || len(cs) != 1 {
		t.Fatalf("A2 was sent %q and %d control frames about t1 (want only the ERROR)", out, len(cs))
	}
	for _, c := range b.Now().Controls("t1") {
		if c.Type == proto.TypeDetached {
			t.Fatalf("B was sent %s", c.Raw)
		}
	}
}

// A resume at the terminal's current generation goes on as any ATTACH:
// from a host whose old connection still holds the terminal (hung: the
// server has not seen it die), which is taken over, and from one whose
// old connection the server saw end. A resume past the generation (a
// server that gave none, or restarted) goes on too. Each ATTACHED
// carries a new, greater generation.
func TestResumeTakesBackOwnTerminal(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	old, gone, a2 := s.host(), s.host(), s.host()
	n1 := openCat(t, old, "t1")
	n2 := openCat(t, gone, "t2")
	n3 := openCat(t, a2, "t3")
	gone.CloseStdin()
	waitDetached(t, a2, "t2")

	at := attachAnswer(t, a2, "t1", map[string]any{"terminalId": "t1", "offset": 0, "resume": n1})
	if at.Type != proto.TypeAttached || holdGenOf(t, at) <= max(n1, n2, n3) {
		t.Fatalf("resume %d of the terminal the old connection still holds: %v %s, want ATTACHED with a new holdGen", n1, at.Type, at.Raw)
	}
	if d := old.WaitControl(proto.TypeDetached, "t1"); !strings.Contains(d.Raw, "taken over") {
		t.Fatalf("the old connection's DETACHED: %s", d.Raw)
	}
	g1 := holdGenOf(t, at)
	at = attachAnswer(t, a2, "t2", map[string]any{"terminalId": "t2", "offset": 0, "resume": n2})
	if at.Type != proto.TypeAttached || holdGenOf(t, at) <= g1 {
		t.Fatalf("resume %d of a detached terminal: %v %s, want ATTACHED with a holdGen past %d", n2, at.Type, at.Raw, g1)
	}
	g2 := holdGenOf(t, at)
	// t3 is a2's own: a resume far past its generation takes it again.
	at = attachAnswer(t, a2, "t3", map[string]any{"terminalId": "t3", "offset": 0, "resume": n3 + 1<<40})
	if at.Type != proto.TypeAttached || holdGenOf(t, at) <= g2 {
		t.Fatalf("resume past the generation: %v %s, want ATTACHED with a holdGen past %d", at.Type, at.Raw, g2)
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		a2.Input(id, "mine\n")
		a2.WaitOutput(id, "mine\r\nmine\r\n")
	}
	if e, _ := entry(list(t, a2), "t1"); !e.Attached || e.HoldGen != g1 {
		t.Fatalf("LISTED t1 %+v, want attached at holdGen %d", e, g1)
	}
}

// B took t1 over from A and then let it go (DETACH): the terminal is
// detached, but it was taken since A held it, so A's resume is refused
// and it stays detached.
func TestResumeRefusedAfterTakeoverAndDetach(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a, b, a2 := s.host(), s.host(), s.host()
	n := openCat(t, a, "t1")
	if at := attachAnswer(t, b, "t1", map[string]any{"terminalId": "t1", "offset": 0}); at.Type != proto.TypeAttached {
		t.Fatalf("B's ATTACH: %s", at.Raw)
	}
	a.WaitControl(proto.TypeDetached, "t1")
	b.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "t1"})
	b.WaitControl(proto.TypeDetached, "t1")
	waitDetached(t, a2, "t1")

	mustRefuseResume(t, a2, "t1", n)
	if e, _ := entry(list(t, a2), "t1"); e.Attached {
		t.Fatalf("after the refusal: %+v, want it detached still", e)
	}
	// A plain ATTACH still takes it, as before the generations.
	if at := attachAnswer(t, a2, "t1", map[string]any{"terminalId": "t1", "offset": 0}); at.Type != proto.TypeAttached {
		t.Fatalf("a plain ATTACH after the refusal: %s", at.Raw)
	}
}

// An ATTACH without "resume" takes the terminal over as it always did,
// under a new generation; a viewer's ATTACH ignores "resume"; a handed-
// over viewer is told its generation, and the holder that handed it over
// can no longer resume; a malformed resume is refused.
func TestAttachWithoutResumeAndViewers(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a, b, c, v := s.host(), s.host(), s.host(), s.host()
	n := openCat(t, a, "t1")
	if at := attachAnswer(t, b, "t1", map[string]any{"terminalId": "t1", "offset": 0}); at.Type != proto.TypeAttached {
		t.Fatalf("B's ATTACH: %s", at.Raw)
	}
	at := attachAnswer(t, c, "t1", map[string]any{"terminalId": "t1", "offset": 0})
	if at.Type != proto.TypeAttached {
		t.Fatalf("C's ATTACH without resume: %v %s, want it to take the terminal over", at.Type, at.Raw)
	}
	gc := holdGenOf(t, at)
	if d := b.WaitControl(proto.TypeDetached, "t1"); !strings.Contains(d.Raw, "taken over") {
		t.Fatalf("B's DETACHED: %s", d.Raw)
	}
	c.Input("t1", "c\n")
	c.WaitOutput("t1", "c\r\nc\r\n")

	// A viewer's ATTACH with an outdated resume is a view all the same.
	vw := attachAnswer(t, v, "t1", map[string]any{"terminalId": "t1", "offset": 0, "mode": "view", "resume": n})
	if vw.Type != proto.TypeAttached || vw.Fields["mode"] != "view" || vw.Fields["holdGen"] != nil {
		t.Fatalf("a view with resume: %v %s, want ATTACHED mode view without holdGen", vw.Type, vw.Raw)
	}
	viewer := uint64(vw.Fields["viewer"].(float64))
	v.WaitOutput("t1", "c\r\nc\r\n")
	before := len(v.Now().Frames)
	c.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "t1", "to": viewer})
	sn := v.MustUntil("the handed-over ATTACHED", func(sn hosttest.Snapshot) bool {
		_, ok := controlAfter(sn, before, proto.TypeAttached, "t1")
		return ok
	})
	hm, _ := controlAfter(sn, before, proto.TypeAttached, "t1")
	hv := holdGenOf(t, hosttest.Control{Type: proto.TypeAttached, Fields: hm, Raw: string(proto.Marshal(hm))})
	if hm["mode"] != "hold" || hv <= gc {
		t.Fatalf("the handed-over ATTACHED %v: want mode hold and a holdGen past %d", hm, gc)
	}
	mustRefuseResume(t, c, "t1", gc)
	v.Input("t1", "v\n")
	v.WaitOutput("t1", "c\r\nc\r\nv\r\nv\r\n")

	for _, bad := range []string{`-1`, `"3"`, `1.5`} {
		before := len(a.Now().Frames)
		a.Send(proto.TypeAttach, []byte(`{"terminalId":"t1","offset":0,"resume":`+bad+`}`))
		sn := a.MustUntil("ERROR for resume "+bad, func(sn hosttest.Snapshot) bool {
			_, ok := controlAfter(sn, before, proto.TypeError, "t1")
			return ok
		})
		if m, _ := controlAfter(sn, before, proto.TypeError, "t1"); !strings.Contains(m["message"].(string), "malformed ATTACH: resume") {
			t.Fatalf("resume %s: ERROR %v", bad, m)
		}
	}
	if e, _ := entry(list(t, a), "t1"); !e.Attached || e.HoldGen != hv {
		t.Fatalf("after the malformed ATTACHes: %+v, want the viewer holding at holdGen %d", e, hv)
	}
}

// The generations survive a live upgrade: a resume from before a
// takeover is still refused after it, the holder's own generation still
// takes the terminal back, and the counter goes on past every generation
// given before.
func TestResumeAcrossUpgrade(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	a, b := s.host(), s.host()
	n := openCat(t, a, "t1")
	at := attachAnswer(t, b, "t1", map[string]any{"terminalId": "t1", "offset": 0})
	if at.Type != proto.TypeAttached {
		t.Fatalf("B's ATTACH: %s", at.Raw)
	}
	m := holdGenOf(t, at)
	a.WaitControl(proto.TypeDetached, "t1")
	b.Input("t1", "before\n")
	b.WaitOutput("t1", "before\r\nbefore\r\n")

	s.upgradeTo(copyBinary(t))
	a.WaitExit(hosttest.Timeout)
	b.WaitExit(hosttest.Timeout)

	h := s.host()
	if e, _ := entry(list(t, h), "t1"); e.Attached || e.HoldGen != m {
		t.Fatalf("after the upgrade: %+v, want detached at holdGen %d", e, m)
	}
	mustRefuseResume(t, h, "t1", n)
	at = attachAnswer(t, h, "t1", map[string]any{"terminalId": "t1", "offset": len(b.Now().Output("t1")), "resume": m})
	if at.Type != proto.TypeAttached || holdGenOf(t, at) <= m {
		t.Fatalf("B's host resuming at %d after the upgrade: %v %s", m, at.Type, at.Raw)
	}
	h.Input("t1", "after\n")
	h.WaitOutput("t1", "after\r\nafter\r\n")
	if g := openCat(t, h, "t2"); g <= holdGenOf(t, at) {
		t.Fatalf("a terminal opened after the upgrade got holdGen %d, not past %d", g, holdGenOf(t, at))
	}
}

// A re-adopting OPEN makes its connection the holder too: its OPENED
// carries a new generation, and the host that held the terminal before
// can no longer resume it.
func TestReadoptGivesAHoldGen(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h1 := s.host("--readopt")
	n := openCat(t, h1, "t1")
	h1.CloseStdin()
	h2 := s.host("--readopt")
	waitDetached(t, h2, "t1")
	h2.Open(proto.Open{TerminalID: "t1", Cols: 80, Rows: 24, Cmd: "cat"})
	op := h2.WaitControl(proto.TypeOpened, "t1")
	if op.Fields["readopted"] != true || holdGenOf(t, op) <= n {
		t.Fatalf("re-adopting OPENED %s: want readopted and a holdGen past %d", op.Raw, n)
	}
	mustRefuseResume(t, s.host(), "t1", n)
	h2.Input("t1", "still\n")
	h2.WaitOutput("t1", "still\r\nstill\r\n")
}

// After a crash (--journal-dir) the next server counts from 0 again: a
// dead terminal has no generation, and a resume from before the crash
// reads it (the rule does not hold across a crash, docs/persist.md).
// REVIVE makes its connection the holder under a new generation, which
// another host's resume from before it can no longer take back.
func TestResumeAfterCrashAndRevive(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	h := s.host("--journal-dir", jdir)
	n := openCat(t, h, "t1")
	h.Input("t1", "kept\n")
	h.WaitOutput("t1", "kept\r\nkept\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host("--journal-dir", jdir)
	if e, ok := entry(list(t, h2), "t1"); !ok || !e.Dead || e.HoldGen != 0 {
		t.Fatalf("after the crash: %+v, want t1 dead, with no holdGen", e)
	}
	at := attachAnswer(t, h2, "t1", map[string]any{"terminalId": "t1", "offset": 0, "resume": n + 5})
	if at.Type != proto.TypeAttached {
		t.Fatalf("a resume of a dead terminal: %v %s, want ATTACHED", at.Type, at.Raw)
	}
	g := holdGenOf(t, at)
	h2.WaitOutput("t1", "kept\r\nkept\r\n")
	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "t1"})
	if r := holdGenOf(t, h2.WaitControl(proto.TypeOpened, "t1")); r <= g {
		t.Fatalf("REVIVE's OPENED holdGen %d, want past %d", r, g)
	}
	mustRefuseResume(t, s.host("--journal-dir", jdir), "t1", g)
	h2.Input("t1", "revived\n")
	h2.WaitOutput("t1", "revived\r\nrevived\r\n")
}

// A host's resume got through on a connection that dropped before its
// ATTACHED arrived: the host never learnt the new generation and resumes
// with the one it had again, on a third connection. Nobody else held the
// terminal, so that is taken too. Once another host takes it with a
// plain ATTACH, neither generation the first host was given takes it back.
func TestResumeAgainAfterAnUnansweredResume(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a1, a2, a3, b := s.host(), s.host(), s.host(), s.host()
	n := openCat(t, a1, "t1")
	at := attachAnswer(t, a2, "t1", map[string]any{"terminalId": "t1", "offset": 0, "resume": n})
	if at.Type != proto.TypeAttached {
		t.Fatalf("the first resume: %v %s", at.Type, at.Raw)
	}
	g2 := holdGenOf(t, at)
	a2.CloseStdin() // its ATTACHED "never arrived"
	at = attachAnswer(t, a3, "t1", map[string]any{"terminalId": "t1", "offset": 0, "resume": n})
	if at.Type != proto.TypeAttached || holdGenOf(t, at) <= g2 {
		t.Fatalf("resume %d again after a resume (holdGen %d) of the same host: %v %s, want ATTACHED", n, g2, at.Type, at.Raw)
	}
	g3 := holdGenOf(t, at)
	a3.Input("t1", "three\n")
	a3.WaitOutput("t1", "three\r\nthree\r\n")

	if at := attachAnswer(t, b, "t1", map[string]any{"terminalId": "t1", "offset": 0}); at.Type != proto.TypeAttached {
		t.Fatalf("B's ATTACH: %s", at.Raw)
	}
	a3.WaitControl(proto.TypeDetached, "t1")
	a4 := s.host()
	for _, g := range []uint64{n, g2, g3} {
		mustRefuseResume(t, a4, "t1", g)
	}
	b.Input("t1", "b\n")
	b.WaitOutput("t1", "b\r\nb\r\n")
}
