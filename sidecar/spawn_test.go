//go:build unix

package sidecar

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests hold chosen spawns at the beforeSpawn seam, so that frames
// are known to arrive while the spawn is in flight.

// lineAndSize reads one line and prints it with the window size it sees.
const lineAndSize = `read line; echo "line=$line size=$(stty size)"`

func TestSlowSpawnHoldsNoOtherTerminal(t *testing.T) {
	g := newGate("slow")
	h := startInproc(t, g.hook)
	h.sendJSON(proto.TypeOpen, openCmd("fast", "cat"))
	h.control(proto.TypeOpened, "fast")

	h.sendJSON(proto.TypeOpen, openCmd("slow", "cat"))
	g.waitReached(t, "slow")
	h.input("fast", "ping\n")
	h.output("fast", "ping")
	frames, _, _, _ := h.snapshot()
	assert.Empty(t, about(frames, "slow"), "slow answered while its spawn is held")

	g.release("slow")
	h.control(proto.TypeOpened, "slow")
	h.input("slow", "pong\n")
	h.output("slow", "pong")
}

func TestFramesDuringSpawnApplyInOrder(t *testing.T) {
	g := newGate("seq")
	h := startInproc(t, g.hook)
	o := openCmd("seq", "/bin/sh", "-c", lineAndSize)
	o.Credit = ptr(uint64(0))
	h.sendJSON(proto.TypeOpen, o)
	g.waitReached(t, "seq")
	// RESIZE ahead of INPUT: the child must see the new size when it
	// gets the line. With credit 0 nothing would come out but for the
	// CREDIT, which waits with the rest.
	h.sendJSON(proto.TypeResize, proto.Resize{TerminalID: "seq", Cols: 100, Rows: 30})
	h.input("seq", "abc\n")
	h.sendJSON(proto.TypeCredit, proto.Credit{TerminalID: "seq", Bytes: 1 << 20})
	h.sendJSON(proto.TypeForeground, proto.Foreground{TerminalID: "seq"})
	h.sync()
	g.release("seq")

	h.output("seq", "line=abc size=30 100")
	h.control(proto.TypeExit, "seq")
	frames, _, _, _ := h.snapshot()
	types := about(frames, "seq")
	require.NotEmpty(t, types)
	assert.Equal(t, proto.TypeOpened, types[0], "first frame about seq: %v", types)
	assert.Contains(t, types, proto.TypeForegroundInfo, "FOREGROUND sent during the spawn got no answer")
	assert.Equal(t, proto.TypeExit, types[len(types)-1])
	// INPUT right after OPEN comes back exactly once (the PTY echoes it).
	assert.Equal(t, 1, strings.Count(outputOf(frames, "seq"), "abc\r\n"), "%q", outputOf(frames, "seq"))
}

func TestCloseAndSignalDuringSpawnEndTheTerminal(t *testing.T) {
	g := newGate("closed", "signalled")
	h := startInproc(t, g.hook)
	h.sendJSON(proto.TypeOpen, openCmd("closed", "cat"))
	h.sendJSON(proto.TypeOpen, openCmd("signalled", "cat"))
	g.waitReached(t, "closed")
	g.waitReached(t, "signalled")
	h.sendJSON(proto.TypeClose, proto.Close{TerminalID: "closed"})
	h.sendJSON(proto.TypeSignal, proto.Signal{TerminalID: "signalled", Signal: "TERM"})
	h.sync()
	g.release("closed")
	g.release("signalled")

	h.control(proto.TypeOpened, "closed")
	assert.Equal(t, "SIGHUP", h.control(proto.TypeExit, "closed")["signal"])
	h.control(proto.TypeOpened, "signalled")
	assert.Equal(t, "SIGTERM", h.control(proto.TypeExit, "signalled")["signal"])
}

// An OPEN for an id whose spawn is in flight is refused after that spawn
// is answered, as by a sidecar that spawns in its read loop: a host that
// matches answers by id must read OPENED for its first OPEN first.
func TestDuplicateOpenDuringSpawnIsRefused(t *testing.T) {
	g := newGate("dup")
	h := startInproc(t, g.hook)
	h.sendJSON(proto.TypeOpen, openCmd("dup", "cat"))
	g.waitReached(t, "dup")
	h.sendJSON(proto.TypeOpen, openCmd("dup", "/bin/true"))
	h.sync()
	frames, _, _, _ := h.snapshot()
	assert.Empty(t, about(frames, "dup"), "dup answered while its spawn is held")

	g.release("dup")
	h.control(proto.TypeOpened, "dup")
	e := h.control(proto.TypeError, "dup")
	assert.Equal(t, "terminal id already exists", e["message"])
	// The terminal is the first OPEN's cat, not the refused /bin/true.
	h.input("dup", "still-cat\n")
	h.output("dup", "still-cat")
	frames, _, _, _ = h.snapshot()
	assert.Equal(t, []proto.Type{proto.TypeOpened, proto.TypeError}, controlsOf(frames, "dup"))
}

// When the first OPEN's spawn fails, its ERROR still comes first, then
// the refusal of the OPEN that came while it spawned.
func TestDuplicateOpenDuringFailingSpawn(t *testing.T) {
	g := newGate("dupbad")
	h := startInproc(t, g.hook)
	o := openCmd("dupbad", "cat")
	o.Cwd = ptr("/does/not/exist")
	h.sendJSON(proto.TypeOpen, o)
	g.waitReached(t, "dupbad")
	h.sendJSON(proto.TypeOpen, openCmd("dupbad", "cat"))
	h.sync()
	g.release("dupbad")
	frames := h.until("two ERRORs", func(frames []seen, _ string) bool { return len(controlsOf(frames, "dupbad")) == 2 })
	var msgs []string
	for _, f := range frames {
		if f.id == "dupbad" && f.typ == proto.TypeError {
			msgs = append(msgs, fmt.Sprint(f.fields["message"]))
		}
	}
	require.Len(t, msgs, 2)
	assert.Contains(t, msgs[0], "/does/not/exist")
	assert.Equal(t, "terminal id already exists", msgs[1])
}

func TestFailedSpawnDropsWhatWaited(t *testing.T) {
	g := newGate("bad")
	h := startInproc(t, g.hook)
	o := openCmd("bad", "cat")
	o.Cwd = ptr("/does/not/exist")
	h.sendJSON(proto.TypeOpen, o)
	g.waitReached(t, "bad")
	h.input("bad", "lost\n")
	h.sendJSON(proto.TypeResize, proto.Resize{TerminalID: "bad", Cols: 100, Rows: 30})
	h.sendJSON(proto.TypeCredit, proto.Credit{TerminalID: "bad", Bytes: 10})
	h.sendJSON(proto.TypeSignal, proto.Signal{TerminalID: "bad", Signal: "NOPE"})
	h.sendJSON(proto.TypeSignal, proto.Signal{TerminalID: "bad", Signal: "INT"})
	h.sendJSON(proto.TypeForeground, proto.Foreground{TerminalID: "bad"})
	h.sendJSON(proto.TypeClose, proto.Close{TerminalID: "bad"})
	h.sync()
	// The INPUT waits in the input queue and counts against the budget.
	assert.Equal(t, len("lost\n"), queuedInput(h.sc))
	g.release("bad")

	e := h.control(proto.TypeError, "bad")
	assert.Contains(t, e["message"], "/does/not/exist")
	assert.Zero(t, queuedInput(h.sc), "the failed terminal's input still counts")

	// The id is free again once its ERROR was written.
	h.sendJSON(proto.TypeOpen, openCmd("bad", "/bin/sh", "-c", lineAndSize))
	h.control(proto.TypeOpened, "bad")
	h.input("bad", "fresh\n")
	h.output("bad", "line=fresh size=24 80")
	h.control(proto.TypeExit, "bad")
	frames, _, _, _ := h.snapshot()
	assert.Equal(t, []proto.Type{proto.TypeError, proto.TypeOpened, proto.TypeExit}, controlsOf(frames, "bad"))
	assert.NotContains(t, outputOf(frames, "bad"), "lost")
}

func TestFramesPastTheDeferredBoundWaitForTheSpawn(t *testing.T) {
	g := newGate("many")
	h := startInproc(t, g.hook)
	h.sendJSON(proto.TypeOpen, openCmd("many", "/bin/sh", "-c", lineAndSize))
	g.waitReached(t, "many")
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 0; i <= maxDeferred; i++ {
			// The last one counts: 77 columns, 33 rows.
			h.sendJSON(proto.TypeResize, proto.Resize{TerminalID: "many", Cols: uint16(77 + maxDeferred - i), Rows: 33})
		}
		h.input("many", "last\n")
	}()
	h.until("the dispatch loop waiting for the spawn", func(_ []seen, log string) bool {
		return strings.Contains(log, "frames wait for its spawn")
	})
	g.release("many")
	<-sent
	h.output("many", "line=last size=33 77")
}

func TestManyOpensAtOnce(t *testing.T) {
	h := startInproc(t, nil)
	const n = 48
	for i := 0; i < n; i++ {
		id := fmt.Sprint("m", i)
		h.sendJSON(proto.TypeOpen, openCmd(id, "/bin/sh", "-c", "echo out-"+id))
	}
	frames := h.until("every EXIT", func(fs []seen, _ string) bool {
		exits := 0
		for _, f := range fs {
			if f.typ == proto.TypeExit {
				exits++
			}
		}
		return exits == n
	})
	for i := 0; i < n; i++ {
		id := fmt.Sprint("m", i)
		assert.Equal(t, []proto.Type{proto.TypeOpened, proto.TypeExit}, controlsOf(frames, id))
		assert.Contains(t, outputOf(frames, id), "out-"+id)
	}
}

// Shutdown while spawns are in flight: one is held until shutdown began,
// more wait for a spawn slot behind it. Every OPEN is answered with OPENED
// and EXIT, no child survives, and nothing of the sidecar is left.
func TestShutdownDuringSpawnsLeaksNothing(t *testing.T) {
	goroutines, fds := settled(t, -1, -1)
	reached := make(chan struct{})
	var h *inproc
	h = startInproc(t, func(id string) {
		if id == "held" {
			close(reached)
			<-h.sc.stop
		}
	})
	ids := []string{"held"}
	h.sendJSON(proto.TypeOpen, openCmd("held", "cat"))
	<-reached
	for i := 0; i < 3*maxSpawns; i++ {
		id := fmt.Sprint("c", i)
		ids = append(ids, id)
		h.sendJSON(proto.TypeOpen, openCmd(id, "cat"))
	}
	frames, err := h.final()
	require.NoError(t, err)

	var pids []int
	for _, id := range ids {
		cs := controlsOf(frames, id)
		switch {
		case len(cs) == 2 && cs[0] == proto.TypeOpened && cs[1] == proto.TypeExit:
			for _, f := range frames {
				if f.id == id && f.typ == proto.TypeOpened {
					pids = append(pids, int(f.fields["pid"].(float64)))
				}
			}
		default:
			t.Errorf("%s: got %v, want OPENED, EXIT", id, cs)
		}
	}
	for _, pid := range pids {
		assert.True(t, hosttest.WaitGone(pid, hosttest.Timeout), "pid %d outlived shutdown", pid)
	}
	runtime.GC()
	settled(t, goroutines, fds)
}

// controlsOf returns the types of the control frames about id, in order.
func controlsOf(fs []seen, id string) []proto.Type {
	var ts []proto.Type
	for _, f := range fs {
		if f.id == id && f.typ != proto.TypeOutput {
			ts = append(ts, f.typ)
		}
	}
	return ts
}

func queuedInput(s *Sidecar) int { return s.input.Total() }

// TestEndedTerminalRefusesInput: once a terminal has finished, input has
// nowhere to go and is refused at once, also when no input ever queued
// and so no writer goroutine ever ran (which used to be what refused it).
func TestEndedTerminalRefusesInput(t *testing.T) {
	h := startInproc(t, nil)
	h.sendJSON(proto.TypeOpen, openCmd("e", "cat"))
	h.control(proto.TypeOpened, "e")
	// No input before the end: no writer goroutine has a reason to run.
	term := h.sc.lookup("e")
	if term == nil {
		t.Fatal("no terminal e after OPENED")
	}
	h.sendJSON(proto.TypeClose, proto.Close{TerminalID: "e"})
	select {
	case <-term.finished:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal did not finish after CLOSE")
	}
	h.control(proto.TypeExit, "e")
	q := term.input
	_, closed, up := q.Status()
	assert.False(t, up, "a writer goroutine ran with no input")
	assert.True(t, closed, "the input queue of a finished terminal still takes input")
	never := make(chan struct{})
	q.PushWait([]byte("late"), never, never, func(string) { t.Error("input to an ended terminal waited") })
	pending, _, up := q.Status()
	assert.Zero(t, pending, "input to an ended terminal was queued")
	assert.False(t, up, "input to an ended terminal started a writer")
}
