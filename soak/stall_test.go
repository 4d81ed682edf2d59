package soak

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
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

	checks := make(map[string]*seqChecker, n)
	for i := 0; i < n; i++ {
		checks[fmt.Sprint("f", i)] = &seqChecker{next: 1}
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
			exits <- parseExit(f.Body)
		}
	})
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

// seqChecker checks, as it arrives, that a stream is the output of
// seq 1 N: every number once, in order.
type seqChecker struct {
	next    int
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
