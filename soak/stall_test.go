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
	const lines = 200000 // ~1.3 MB of seq output per terminal
	stall := size(time.Second, 10*time.Second)
	const rssLimitKiB = 64 << 10

	var want bytes.Buffer
	for i := 1; i <= lines; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	outs := make(map[string]*bytes.Buffer, n)
	for i := 0; i < n; i++ {
		outs[fmt.Sprint("f", i)] = new(bytes.Buffer)
	}
	exits := make(chan proto.Exit, n)
	h := startHost(t, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeOutput:
			id, data, _ := proto.ParseData(f.Body)
			outs[id].Write(data)
		case proto.TypeExit:
			exits <- parseExit(f.Body)
		}
	})
	h.pause()
	for i := 0; i < n; i++ {
		h.open(fmt.Sprint("f", i), "-c", fmt.Sprintf("stty raw -echo; exec seq 1 %d", lines))
	}
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
	// the sidecar and the pipe may buffer.
	running := len(children(h.pid())) - 1 // minus the watchdog
	require.Greater(t, running, 0, "every flood finished while the host was not reading")
	require.Less(t, peak, rssLimitKiB, "sidecar RSS while the host stalled (KiB)")
	h.resume()
	for i := 0; i < n; i++ {
		e := await(t, exits, 2*time.Minute, "EXIT %d of %d", i+1, n)
		require.NotNil(t, e.ExitCode)
		require.Equal(t, 0, *e.ExitCode, "EXIT %+v", e)
	}
	for id, b := range outs {
		if !bytes.Equal(b.Bytes(), want.Bytes()) {
			t.Fatalf("%s: received %d bytes, want %d; first difference at %d", id, b.Len(), want.Len(), firstDiff(b.Bytes(), want.Bytes()))
		}
	}
	t.Logf("%d terminals stalled for %v with %d still running; peak sidecar RSS %d KiB", n, stall, running, peak)
	h.stop(time.Minute)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
