//go:build unix

package persist_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testsize"
	"github.com/ptyplex/ptyplex/proto"
)

// openOrphan opens id on h running script, with OPEN's orphanMs if ms is
// not nil, and returns its pid once its first line came.
func openOrphan(t *testing.T, h *hosttest.Host, id, script string, ms *int64) int {
	t.Helper()
	o := map[string]any{"terminalId": id, "cols": 80, "rows": 24, "cmd": "/bin/sh", "args": []string{"-c", "echo up; " + script}}
	if ms != nil {
		o["orphanMs"] = *ms
	}
	h.SendJSON(proto.TypeOpen, o)
	pid := openedPIDOf(t, h, id)
	h.WaitOutput(id, "up\r\n")
	return pid
}

func ms(n int64) *int64 { return &n }

// A re-adopting OPEN's orphanMs replaces the terminal's, and so does its
// absence: the server's default (--orphan-timeout), as for any OPEN, not
// what the host of the previous run asked for.
func TestReadoptReplacesOrphanMs(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h1 := s.host("--readopt", "--orphan-timeout", "1h")
	openOrphan(t, h1, "o", "exec cat", ms(60000))
	killHost(h1)
	h := s.host()
	left := func() int64 {
		l := waitDetached(t, h, "o")
		e, _ := entry(l, "o")
		if e.OrphanInMs == nil {
			t.Fatalf("LIST of a detached terminal: %+v, want orphanInMs", e)
		}
		return *e.OrphanInMs
	}
	if ms := left(); ms > 60000 {
		t.Fatalf("orphanInMs %d after an OPEN of orphanMs 60000", ms)
	}
	for _, want := range []int64{120000, time.Hour.Milliseconds()} {
		h2 := s.host("--readopt")
		o := map[string]any{"terminalId": "o", "cols": 80, "rows": 24, "cmd": "/bin/sh", "args": []string{"-c", "echo up; exec cat"}}
		if want != time.Hour.Milliseconds() {
			o["orphanMs"] = want
		}
		h2.SendJSON(proto.TypeOpen, o)
		if op := h2.WaitControl(proto.TypeOpened, "o"); op.Fields["readopted"] != true {
			t.Fatalf("OPENED %s, want the terminal re-adopted", op.Raw)
		}
		killHost(h2)
		if ms := left(); ms > want || ms < want-hosttest.Timeout.Milliseconds() {
			t.Fatalf("orphanInMs %d after a re-adopting OPEN, want a little under %d", ms, want)
		}
	}
}

// A terminal nobody holds for longer than its orphan timeout is closed as
// CLOSE closes it (SIGHUP), and its EXIT is kept; one with "orphanMs": -1
// and one a host holds are left alone; LIST shows the time left.
func TestOrphanTimeoutClosesDetachedTerminals(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// The server's default, from the bridge that starts it: 400 ms.
	h1 := s.host("--orphan-timeout", "400ms")
	dflt := openOrphan(t, h1, "default", "exec cat", nil)
	never := openOrphan(t, h1, "never", "exec cat", ms(-1))
	// HUP ignored: only the SIGKILL after CLOSE's grace period ends it.
	stubborn := openOrphan(t, h1, "stubborn", "trap '' HUP; while :; do sleep 1; done", ms(300))
	// Long enough to be listed running whatever the machine's load.
	openOrphan(t, h1, "listed", "exec cat", ms(600000))
	h2 := s.host()
	held := openOrphan(t, h2, "held", "exec cat", ms(1))
	killHost(h1)
	l := waitDetached(t, h2, "default", "never", "stubborn", "listed")
	if e, _ := entry(l, "listed"); e.OrphanInMs == nil || *e.OrphanInMs > 600000 || *e.OrphanInMs < 600000-hosttest.Timeout.Milliseconds() || e.Exited {
		t.Fatalf("LIST of a terminal whose host died: %+v, want orphanInMs a little under 600000", e)
	}
	for _, id := range []string{"never", "held"} {
		if e, _ := entry(l, id); e.OrphanInMs != nil {
			t.Fatalf("LIST of %s: %+v, want no orphanInMs", id, e)
		}
	}

	if !hosttest.WaitGone(dflt, hosttest.Timeout) {
		t.Fatalf("the orphan (pid %d) still runs %v after its host died", dflt, hosttest.Timeout)
	}
	// (Its keep clock starts just after the reaping that LIST shows.)
	l = listUntil(t, h2, "the orphan's exit", func(l proto.Listed) bool {
		e, _ := entry(l, "default")
		return e.Exited && e.DropInMs != nil
	})
	if e, _ := entry(l, "default"); e.Signal != "SIGHUP" || e.DropInMs == nil || e.OrphanInMs != nil {
		t.Fatalf("LIST of the closed orphan: %+v, want SIGHUP and its EXIT kept", e)
	}
	if !hosttest.WaitGone(stubborn, hosttest.Timeout) {
		t.Fatalf("the orphan that ignores SIGHUP (pid %d) was not killed", stubborn)
	}
	// held's clock (1 ms) never ran, never's does not exist.
	for _, pid := range []int{never, held} {
		if !hosttest.Alive(pid) {
			t.Fatalf("pid %d ended, but it had a holder or no orphan timeout", pid)
		}
	}
	h2.Input("held", "still here\n")
	h2.WaitOutput("held", "still here")

	// The kept EXIT reaches the host that comes back.
	h3 := s.host()
	h3.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "default"})
	if ex := h3.WaitControl(proto.TypeExit, "default"); ex.Fields["signal"] != "SIGHUP" {
		t.Fatalf("EXIT of the orphan: %s", ex.Raw)
	}
	// A host that takes a terminal over stops its clock; DETACH starts it.
	h3.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "never"})
	h3.WaitControl(proto.TypeAttached, "never")
	h3.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "held"}) // not held by h3: refused
	h3.WaitControl(proto.TypeError, "held")
	h2.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "held"})
	h2.WaitControl(proto.TypeDetached, "held")
	if !hosttest.WaitGone(held, hosttest.Timeout) {
		t.Fatalf("the terminal detached with orphanMs 1 (pid %d) still runs", held)
	}
	if !hosttest.Alive(never) {
		t.Fatalf("orphanMs -1 (pid %d) ended", never)
	}
	// Re-adoption does not give back a terminal the bound closed (its
	// EXIT still unread): the same OPEN starts a new one.
	h4 := s.host("--readopt")
	if pid := openOrphan(t, h4, "stubborn", "trap '' HUP; while :; do sleep 1; done", ms(300)); pid == stubborn {
		t.Fatalf("OPEN with --readopt gave back the terminal the orphan bound closed (pid %d)", pid)
	}
	if op := h4.WaitControl(proto.TypeOpened, "stubborn"); op.Fields["readopted"] != nil {
		t.Fatalf("OPENED %s: want a new terminal", op.Raw)
	}
}

// --orphan-timeout 0: no orphan bound unless an OPEN asks for one.
func TestOrphanTimeoutZeroIsNever(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h1 := s.host("--orphan-timeout", "0")
	forever := openOrphan(t, h1, "forever", "exec cat", nil)
	asked := openOrphan(t, h1, "asked", "exec cat", ms(200))
	killHost(h1)
	h2 := s.host()
	l := waitDetached(t, h2, "forever", "asked")
	if e, _ := entry(l, "forever"); e.OrphanInMs != nil {
		t.Fatalf("LIST: %+v, want no orphanInMs", e)
	}
	if !hosttest.WaitGone(asked, hosttest.Timeout) {
		t.Fatalf("orphanMs 200 (pid %d) still runs", asked)
	}
	if !hosttest.Alive(forever) {
		t.Fatalf("pid %d ended with --orphan-timeout 0", forever)
	}
}

// OPEN's orphanMs is checked: a malformed one is refused with an ERROR.
func TestOrphanMsMalformed(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	for i, bad := range []any{-2, 1.5, "60000", true} {
		id := fmt.Sprintf("bad%d", i)
		h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": id, "cols": 80, "rows": 24, "cmd": "/bin/true", "orphanMs": bad})
		e := h.WaitControl(proto.TypeError, id)
		if msg, _ := e.Fields["message"].(string); !strings.Contains(msg, "orphanMs") {
			t.Fatalf("orphanMs %v: %s", bad, e.Raw)
		}
	}
}

// A flooding host SIGKILLed ten times (four in make test), each run reopening the same id
// (re-adopted: the previous run's flood, which outlived its host) and one
// of its own: once the orphan timeout has passed, none of their terminals
// runs, by the process table.
//
// (scripts/test-readopt.sh with the whole plain suite is the longer form.)
func TestOrphanFloodingHostKilledTenTimes(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// Longer than a run takes, so that each run re-adopts the flood the
	// previous one left.
	const timeout = 8 * time.Second
	flood := "while :; do echo flooding flooding flooding flooding; done"
	var pids []int
	var last time.Time
	prev := 0
	runs := testsize.Pick(4, 10) // ten under make soak
	for run := 0; run < runs; run++ {
		h := s.host("--readopt", "--orphan-timeout", timeout.String())
		if run > 0 && time.Since(last) >= timeout/2 {
			t.Logf("run %d: the bridge took %v to start; t-1 need not be re-adopted", run, time.Since(last))
		}
		for _, id := range []string{"t-1", fmt.Sprintf("run-%d", run)} {
			script := flood
			if id != "t-1" {
				script = "echo flooding; exec cat" // one flood at a time is enough load
			}
			h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": id, "cols": 80, "rows": 24, "cmd": "/bin/sh", "args": []string{"-c", script}})
			op := h.WaitControl(proto.TypeOpened, id)
			// The OPEN was served before its OPENED came back. Served
			// well within the bound after the previous host was killed
			// (so after its terminals were detached), it finds the flood
			// still running; later (a bridge slow to start on a busy
			// machine: the time it was sent says nothing, it waits in
			// the pipe until the bridge hands the pipe over), it may not.
			answeredAfter := time.Since(last)
			pid := int(op.Fields["pid"].(float64))
			if id == "t-1" && run > 0 && answeredAfter < timeout/2 && (pid != prev || op.Fields["readopted"] != true) {
				t.Fatalf("run %d: OPEN t-1 gave %s, want the flood of run %d (pid %d) re-adopted", run, op.Raw, run-1, prev)
			}
			if id == "t-1" {
				prev = pid
			}
			pids = append(pids, pid)
			h.WaitOutput(id, "flooding")
		}
		killHost(h)
		last = time.Now()
	}
	h := s.host()
	for _, pid := range pids {
		// The bound, CLOSE's grace period, and the machine's load.
		if !hosttest.WaitGone(pid, timeout+hosttest.Timeout) {
			t.Fatalf("pid %d still runs %v after the last host died (orphan timeout %v)", pid, time.Since(last), timeout)
		}
	}
	gone := time.Since(last)
	l := listUntil(t, h, "every terminal exited", func(l proto.Listed) bool {
		for _, e := range l.Terminals {
			if !e.Exited || e.Signal != "SIGHUP" {
				return false
			}
		}
		return len(l.Terminals) == runs+1 // one per run, and t-1
	})
	t.Logf("%d terminals, all ended by SIGHUP %v after the last host was killed", len(l.Terminals), gone)
}

// A live upgrade hands each orphan clock over with what was left of it
// (a new full one would let an orphan live on across every upgrade), and
// the terminals it hands over with no holder get one: the upgrade ended
// every connection.
func TestUpgradeKeepsOrphanClocks(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	bin := copyBinary(t)
	h := s.host()
	openOrphan(t, h, "orphan", "exec cat", ms(600000))
	openOrphan(t, h, "held", "exec cat", ms(600000))
	h.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "orphan"})
	h.WaitControl(proto.TypeDetached, "orphan")
	e, _ := entry(list(t, h), "orphan")
	if e.OrphanInMs == nil {
		t.Fatalf("LIST after DETACH: %+v", e)
	}
	before, since := *e.OrphanInMs, time.Now()
	s.upgradeTo(bin)
	h.WaitExit(hosttest.Timeout)
	h2 := s.host()
	// Measured before the LIST is sent: at most the time between the two
	// readings of the clock.
	elapsed := time.Since(since).Milliseconds()
	l := list(t, h2)
	o, _ := entry(l, "orphan")
	if o.OrphanInMs == nil || *o.OrphanInMs > before-elapsed {
		t.Fatalf("orphan after the upgrade: %+v (%v ms left); before it %d ms were left, at least %d ms earlier", o, deref(o.OrphanInMs), before, elapsed)
	}
	if e, _ := entry(l, "held"); e.OrphanInMs == nil || *e.OrphanInMs > 600000 {
		t.Fatalf("held after the upgrade, which ended its host's connection: %+v", e)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A terminal the orphan bound closed is not re-adopted by an OPEN of its
// program after a live upgrade either: the OPEN gets a new terminal, as it
// does from the server that closed it. The upgrade did not hand over that
// the bound had closed it, so the new image re-adopted the ended terminal
// (OPENED "readopted", its last screen, its EXIT at once) where the host
// wanted a terminal to work in.
func TestUpgradeKeepsOrphanClosed(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	bin := copyBinary(t)
	h := s.host("--readopt")
	old := openOrphan(t, h, "o", "exec sleep 1000", ms(200))
	killHost(h)
	h2 := s.host()
	listUntil(t, h2, "o closed by the orphan bound", func(l proto.Listed) bool {
		e, ok := entry(l, "o")
		return ok && e.Exited
	})
	s.upgradeTo(bin)
	h2.WaitExit(hosttest.Timeout)
	h3 := s.host("--readopt")
	pid := openOrphan(t, h3, "o", "exec sleep 1000", ms(200))
	if op := h3.WaitControl(proto.TypeOpened, "o"); pid == old || op.Fields["readopted"] == true {
		t.Fatalf("OPENED %s after the upgrade: want a new terminal, not the one the orphan bound closed (pid %d)", op.Raw, old)
	}
}
