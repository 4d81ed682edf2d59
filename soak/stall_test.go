package soak

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
	"github.com/stretchr/testify/require"
)

// TestStalledHost floods from many terminals without credit while the host
// does not read the sidecar's stdout. Back-pressure must hold the children
// in the kernel rather than buffer their output: the sidecar's RSS stays
// under 64 MiB. When the host reads again, every terminal's output must be
// complete and in order.
func TestStalledHost(t *testing.T) {
	n := size(16, 64)
	lines := size(200000, 1000000) // seq's output: 1.3 MB or 6.9 MB per terminal
	stall := size(time.Second, 10*time.Second)
	const rssLimitKiB = 64 << 10

	h, checks, opened, exits := startSeqHost(t, "f", n)
	for i := 0; i < n; i++ {
		h.open(fmt.Sprint("f", i), "-c", fmt.Sprintf("stty raw -echo; exec seq 1 %d", lines))
	}
	for i := 0; i < n; i++ {
		await(t, opened, hostTimeout, "OPENED %d of %d", i+1, n)
	}
	h.pause()
	// The stall is the scenario, not a wait for something: sample the
	// sidecar's memory until the timer ends it.
	peak := 0
	over := time.NewTimer(stall)
	tick := time.NewTicker(50 * time.Millisecond)
sampling:
	for {
		select {
		case <-over.C:
			break sampling
		case <-tick.C:
			peak = max(peak, statusKiB(t, h.pid(), "VmRSS"))
		}
	}
	tick.Stop()
	// The floods cannot have finished: their output does not fit in what
	// the sidecar, the pipe and the PTYs may buffer.
	running := len(children(h.pid())) - 1 // minus the watchdog
	require.Greater(t, running, 0, "every flood finished while the host was not reading")
	require.Less(t, peak, rssLimitKiB, "sidecar RSS while the host stalled (KiB)")
	h.resume()
	for i := 0; i < n; i++ {
		e := await(t, exits, 5*time.Minute, "EXIT %d of %d", i+1, n)
		require.NotNil(t, e.ExitCode)
		require.Equal(t, 0, *e.ExitCode, "EXIT %+v", e)
	}
	for id, c := range checks {
		require.NoError(t, c.err, id)
		require.Equal(t, lines+1, c.next, "%s: lines received", id)
		require.Empty(t, c.partial, "%s: unterminated last line", id)
	}
	t.Logf("%d terminals stalled for %v, %d of them still flooding at its end; peak sidecar RSS %d KiB", n, stall, running, peak)
	h.stop(time.Minute)
}

// TestStalledHostChildrenExit stalls the host while children whose whole
// output fits in the PTYs and the sidecar's hands finish: their readers
// wait on the host, not on the PTY, so the end of the child must not be
// taken for a PTY held open by something else and hung up (which threw
// away what the PTY still buffered): when the host reads again, every
// terminal's output is complete before its EXIT, however long the stall.
func TestStalledHostChildrenExit(t *testing.T) {
	const n = 24
	const lines = 30000 // 168,894 bytes: what a PTY and a reader's frames in hand hold
	h, checks, _, exits := startSeqHost(t, "e", n)
	h.pause()
	for i := 0; i < n; i++ {
		h.open(fmt.Sprint("e", i), "-c", fmt.Sprintf("stty raw -echo; exec seq 1 %d", lines))
	}
	// Most children have written all they had and exited (zombies until
	// their terminals are drained) while the host still does not read;
	// the others wait for room in their PTYs (their readers took less).
	require.True(t, eventually(hostTimeout, func() bool { return len(children(h.pid()))-1 <= n/2 }),
		"children still running while the host stalls: %v", children(h.pid()))
	// The stall is the scenario: longer than the sidecar gives a PTY that
	// stays open after its child exited before it hangs it up.
	time.Sleep(engine.DrainBound + engine.HolderAttempts*engine.HolderRetry + time.Second)
	h.resume()
	for i := 0; i < n; i++ {
		e := await(t, exits, hostTimeout, "EXIT %d of %d", i+1, n)
		require.NotNil(t, e.ExitCode)
		require.Equal(t, 0, *e.ExitCode, "EXIT %+v", e)
	}
	for id, c := range checks {
		require.NoError(t, c.err, id)
		require.Equal(t, lines+1, c.next, "%s: lines received", id)
		require.Equal(t, lines+1, c.atExit, "%s: lines received before its EXIT", id)
	}
	h.stop(time.Minute)
}

// startSeqHost starts a host for n terminals named prefix0.. that print
// seq's output: each terminal's OUTPUT is checked as it arrives, OPENED
// and EXIT frames are passed on.
func startSeqHost(t *testing.T, prefix string, n int) (*host, map[string]*seqChecker, chan struct{}, chan proto.Exit) {
	checks := make(map[string]*seqChecker, n)
	for i := 0; i < n; i++ {
		checks[fmt.Sprint(prefix, i)] = &seqChecker{next: 1}
	}
	opened := make(chan struct{}, n)
	exits := make(chan proto.Exit, n)
	h := startHost(t, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeOpened:
			opened <- struct{}{}
		case proto.TypeOutput:
			id, data, _ := proto.ParseData(f.Body)
			checks[id].write(data)
		case proto.TypeExit:
			e := parseExit(f.Body)
			checks[e.TerminalID].atExit = checks[e.TerminalID].next
			exits <- e
		}
	})
	return h, checks, opened, exits
}

// seqChecker checks, as it arrives, that a stream is the output of
// seq 1 N: every number once, in order.
type seqChecker struct {
	next    int
	atExit  int // next when the terminal's EXIT arrived
	partial []byte
	err     error
}

func (c *seqChecker) write(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			c.partial = append(c.partial, b...)
			return
		}
		line := append(c.partial, b[:i]...)
		if c.err == nil && string(line) != strconv.Itoa(c.next) {
			c.err = fmt.Errorf("line %d is %q", c.next, line)
		}
		c.partial = line[:0]
		c.next++
		b = b[i+1:]
	}
}
