package sidecar

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var allStates = []termState{spawning, live, closing, reaped, gone}

// legalMoves is the lifecycle as the documentation of termState draws it,
// written out again here so that a change to canMove has to agree with it.
var legalMoves = map[[2]termState]bool{
	{spawning, live}:   true,
	{spawning, reaped}: true,
	{live, closing}:    true,
	{live, reaped}:     true,
	{closing, reaped}:  true,
	{reaped, gone}:     true,
}

// pathTo is a legal sequence of moves from spawning to s.
func pathTo(s termState) []termState {
	switch s {
	case spawning:
		return nil
	case live:
		return []termState{live}
	case closing:
		return []termState{live, closing}
	case reaped:
		return []termState{live, reaped}
	case gone:
		return []termState{live, reaped, gone}
	}
	panic(fmt.Sprintf("no path to %v", s))
}

func testSidecar(t *testing.T) *Sidecar {
	s := New(io.Discard, Options{})
	t.Cleanup(s.out.close)
	return s
}

// termIn returns a terminal brought to state s along legal moves.
func termIn(t *testing.T, sc *Sidecar, s termState) *terminal {
	t.Helper()
	term := newTerminal(sc, "t", nil)
	term.mu.Lock()
	defer term.mu.Unlock()
	for _, next := range pathTo(s) {
		require.NoError(t, term.enterLocked(next), "on the way to %s", s)
	}
	require.Equal(t, s, term.state)
	return term
}

// currentState returns t's state; by the time the caller looks, it may
// have moved on (only forwards).
func (t *terminal) currentState() termState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestStateMoves tries every pair of states: the legal moves are taken,
// every other one is refused and leaves the state as it was.
func TestStateMoves(t *testing.T) {
	sc := testSidecar(t)
	legal := 0
	for _, from := range allStates {
		for _, to := range allStates {
			term := termIn(t, sc, from)
			term.mu.Lock()
			err := term.enterLocked(to)
			got := term.state
			term.mu.Unlock()
			if legalMoves[[2]termState{from, to}] {
				legal++
				assert.NoError(t, err, "%s -> %s", from, to)
				assert.Equal(t, to, got, "%s -> %s", from, to)
			} else {
				assert.Error(t, err, "%s -> %s was allowed", from, to)
				assert.Equal(t, from, got, "refused %s -> %s still changed the state", from, to)
			}
		}
	}
	assert.Equal(t, len(legalMoves), legal)
}

// TestFinishedMeansNoChild: entering reaped closes finished whether a
// child was reaped or the spawn failed, and nothing closes it before.
func TestFinishedMeansNoChild(t *testing.T) {
	sc := testSidecar(t)
	for _, s := range allStates {
		term := termIn(t, sc, s)
		want := s == reaped || s == gone
		assert.Equal(t, want, isClosed(term.finished), "finished closed in %s", s)
	}

	failed := termIn(t, sc, spawning)
	ran := false
	require.True(t, failed.whenLive(func() { ran = true }, -1))
	failed.mu.Lock()
	require.NoError(t, failed.enterLocked(reaped))
	failed.mu.Unlock()
	assert.True(t, isClosed(failed.finished), "a failed spawn is not finished")
	assert.True(t, isClosed(failed.spawned), "a failed spawn still holds act waiting")
	assert.False(t, failed.deferring, "a failed spawn still defers actions")
	require.True(t, failed.whenLive(func() { ran = true }, -1))
	assert.False(t, ran, "an action ran on a terminal whose spawn failed")
}

// TestWhenLiveFollowsTheState: actions wait while spawning, run in order
// once live (the waiting ones finding the terminal live), run at once while
// the child runs, and are dropped once it does not.
func TestWhenLiveFollowsTheState(t *testing.T) {
	sc := testSidecar(t)
	term := termIn(t, sc, spawning)
	var order []string
	var seen []termState
	record := func(name string) func() {
		return func() {
			order = append(order, name)
			seen = append(seen, term.currentState())
		}
	}
	require.True(t, term.whenLive(record("a"), -1))
	require.True(t, term.whenLive(record("b"), 2))
	assert.False(t, term.whenLive(record("c"), 2), "a third action was queued past a limit of 2")
	assert.Empty(t, order, "an action ran during the spawn")

	term.goLive()
	assert.Equal(t, []string{"a", "b"}, order)
	assert.Equal(t, []termState{live, live}, seen, "deferred actions did not find the terminal live")
	assert.True(t, isClosed(term.spawned))

	require.True(t, term.whenLive(record("d"), 0))
	assert.Equal(t, []string{"a", "b", "d"}, order, "an action on a live terminal did not run at once")

	term.mu.Lock()
	require.NoError(t, term.enterLocked(closing))
	term.mu.Unlock()
	term.whenLive(record("e"), -1)
	assert.Equal(t, "e", order[len(order)-1], "an action on a closing terminal did not run")

	term.mu.Lock()
	require.NoError(t, term.enterLocked(reaped))
	term.mu.Unlock()
	term.whenLive(record("f"), -1)
	assert.NotContains(t, order, "f", "an action ran after the reap")
}

// TestIfLiveIsTheGuard: ifLive runs its function only while the child runs.
func TestIfLiveIsTheGuard(t *testing.T) {
	sc := testSidecar(t)
	for _, s := range allStates {
		term := termIn(t, sc, s)
		ran := false
		did := term.ifLive(func() { ran = true })
		want := s == live || s == closing
		assert.Equal(t, want, ran, "ifLive ran in %s", s)
		assert.Equal(t, want, did, "ifLive's answer in %s", s)
	}
}

func TestStateNames(t *testing.T) {
	var names []string
	for _, s := range allStates {
		names = append(names, s.String())
	}
	assert.Equal(t, []string{"spawning", "live", "closing", "reaped", "gone"}, names)
	assert.Equal(t, "State(9)", termState(9).String())
}

// syncBuffer is a bytes.Buffer safe for the writer's holder and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestWriterDropsFramesAfterExit: a control frame about a terminal that is
// queued after that terminal's EXIT (its sender found the child running
// just before the reap) never reaches the host, and its callbacks still
// run; frames of other terminals are untouched.
func TestWriterDropsFramesAfterExit(t *testing.T) {
	var out syncBuffer
	w := newWriter(&out, nil, func(error) {})
	term, other := &terminal{id: "t"}, &terminal{id: "u"}
	w.send(controlFrame(term, proto.TypeForegroundInfo, proto.ForegroundInfo{TerminalID: "t"}), true)
	exit := controlFrame(term, proto.TypeExit, proto.Exit{TerminalID: "t"})
	exit.last = true
	w.send(exit, true)
	late := controlFrame(term, proto.TypeForegroundInfo, proto.ForegroundInfo{TerminalID: "t"})
	lateDone := make(chan struct{})
	late.after = func() { close(lateDone) }
	w.send(late, false)
	w.queueControl(term, proto.TypeError, proto.Error{TerminalID: "t", Message: "late"})
	w.queueControl(other, proto.TypeForegroundInfo, proto.ForegroundInfo{TerminalID: "u"})
	w.close()

	assert.True(t, isClosed(lateDone), "a dropped frame's callback did not run")
	assert.Zero(t, term.queued.Load(), "dropped frames still count as queued")
	r := proto.NewReader(bytes.NewReader(out.b.Bytes()))
	var got []string
	for {
		f, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("%s %s", f.Type, f.Body))
	}
	assert.Equal(t, []string{
		fmt.Sprintf("%s %s", proto.TypeForegroundInfo, `{"terminalId":"t"}`),
		fmt.Sprintf("%s %s", proto.TypeExit, `{"exitCode":null,"terminalId":"t"}`),
		fmt.Sprintf("%s %s", proto.TypeForegroundInfo, `{"terminalId":"u"}`),
	}, got)
}

// TestNoFrameFollowsExit drives real terminals that exit at once while the
// host keeps asking about them (FOREGROUND, and SIGNALs that earn an
// ERROR), so that answers race with the reap: whatever is answered, each
// terminal's EXIT is its last frame.
func TestNoFrameFollowsExit(t *testing.T) {
	h := startInproc(t, nil)
	const terms, asks = 8, 100
	for i := 0; i < terms; i++ {
		id := fmt.Sprint("x", i)
		h.sendJSON(proto.TypeOpen, openCmd(id, trueCmd[0], trueCmd[1:]...))
		for j := 0; j < asks; j++ {
			h.sendJSON(proto.TypeForeground, proto.Foreground{TerminalID: id})
			h.sendJSON(proto.TypeSignal, proto.Signal{TerminalID: id, Signal: "NOSUCH"})
		}
	}
	for i := 0; i < terms; i++ {
		h.control(proto.TypeExit, fmt.Sprint("x", i))
	}
	frames, err := h.final()
	require.NoError(t, err)
	for i := 0; i < terms; i++ {
		id := fmt.Sprint("x", i)
		types := about(frames, id)
		require.NotEmpty(t, types)
		assert.Equal(t, proto.TypeOpened, types[0], "%s: %v", id, types)
		assert.Equal(t, proto.TypeExit, types[len(types)-1], "%s: a frame follows EXIT: %v", id, types)
		n := 0
		for _, ty := range types {
			if ty == proto.TypeExit {
				n++
			}
		}
		assert.Equal(t, 1, n, "%s: EXIT frames", id)
	}
}
