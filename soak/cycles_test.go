package soak

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar"
	"github.com/stretchr/testify/require"
)

// cycleKinds are the ways a terminal's life ends in the cycle soak.
var cycleKinds = []struct {
	name  string
	open  proto.Open
	close bool // send CLOSE on OPENED
	input string
}{
	{name: "exit", open: proto.Open{Cmd: "/bin/sh", Args: []string{"-c", "echo hi; exit 3"}}},
	{name: "signal death", open: proto.Open{Cmd: "/bin/sh", Args: []string{"-c", "kill -KILL $$"}}},
	{name: "close", open: proto.Open{Cmd: "cat"}, close: true, input: "typed\n"},
	{name: "close with background job", open: proto.Open{Cmd: "/bin/sh", Args: []string{"-c", "sleep 100 & exec sleep 100"}}, close: true},
	{name: "failed open", open: proto.Open{Cmd: "/no/such/program"}},
	{name: "throttled flood closed", open: proto.Open{Cmd: "/bin/sh", Args: []string{"-c", "exec cat /dev/zero"}, Credit: ptr(uint64(1 << 10))}, close: true},
}

// TestOpenCloseCycles runs thousands of terminals through one in-process
// sidecar, mixing exits, signal deaths, CLOSEs (with input, background jobs
// and a credit-parked reader) and failing OPENs, with many in flight. The
// sidecar's goroutines, descriptors and child processes must return to
// their starting counts.
func TestOpenCloseCycles(t *testing.T) {
	cycles := size(300, 10000)
	const inflight = 32
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sc := sidecar.New(outW, sidecar.Options{})
	ran := make(chan error, 1)
	go func() { ran <- sc.Run(inR) }()
	type event struct {
		t   proto.Type
		id  string
		pid int
	}
	events := make(chan event, 256)
	s := client.NewStream(outR, inW, client.StreamOptions{ReuseBodies: true, Handle: func(f proto.Frame) error {
		if f.Type != proto.TypeOutput {
			var o proto.Opened
			jsonUnmarshal(f.Body, &o)
			events <- event{f.Type, proto.RecoverID(f.Body), o.PID}
		}
		return nil
	}})
	go func() {
		<-s.ReadDone()
		close(events)
	}()
	send := func(b []byte) {
		require.NoError(t, s.Send(b))
	}
	kindOf := map[string]int{}
	sessions := map[int]bool{} // every terminal's session id
	run := func(from, to int) {
		next, live := from, 0
		for next < to || live > 0 {
			for live < inflight && next < to {
				k := next % len(cycleKinds)
				id := fmt.Sprint("c", next)
				o := cycleKinds[k].open
				o.TerminalID, o.Cols, o.Rows = id, 80, 24
				kindOf[id] = k
				send(proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(o)))
				next++
				live++
			}
			ev, ok := <-events
			require.True(t, ok, "sidecar output ended")
			switch ev.t {
			case proto.TypeOpened:
				sessions[ev.pid] = true
				k := cycleKinds[kindOf[ev.id]]
				if k.input != "" {
					send(proto.AppendDataFrame(nil, proto.TypeInput, ev.id, []byte(k.input)))
				}
				if k.close {
					send(proto.AppendFrame(nil, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: ev.id})))
				}
			case proto.TypeExit, proto.TypeError:
				live--
				delete(kindOf, ev.id)
			}
		}
	}
	run(0, 2*len(cycleKinds)) // warm up pools, the poller and the runtime's threads
	g0, fd0, kids0 := counts()
	start := time.Now()
	run(2*len(cycleKinds), cycles)
	elapsed := time.Since(start)
	var g, fd, kids int
	ok := eventually(hostTimeout, func() bool {
		g, fd, kids = counts()
		return g <= g0 && fd <= fd0 && kids <= kids0
	})
	if !ok {
		buf := make([]byte, 1<<20)
		t.Fatalf("after %d cycles: goroutines %d (start %d), descriptors %d (start %d), children %d (start %d)\n%s",
			cycles, g, g0, fd, fd0, kids, kids0, buf[:runtime.Stack(buf, true)])
	}
	// Nothing of any terminal's session outlives it, not even the
	// background jobs that are nobody's children any more. They were sent
	// SIGKILL before the EXIT, but one may still be on its way out then
	// (its memory gone, not yet a zombie): seen once in CI as a process
	// of a session with an empty command line. So the check waits for
	// them to be gone, within the deadline; one that escaped the kill
	// would stay, and fail it.
	var left []string
	eventually(hostTimeout, func() bool {
		left = inSessions(sessions)
		return len(left) == 0
	})
	require.Empty(t, left, "processes left of the terminals' sessions")
	t.Logf("%d cycles in %v (%.0f/s); goroutines %d, descriptors %d, children %d, as at the start",
		cycles, elapsed.Round(time.Millisecond), float64(cycles)/elapsed.Seconds(), g, fd, kids)
	s.CloseInput()
	require.NoError(t, <-ran)
}

// counts returns this process's goroutines, open descriptors and children
// (zombies included: the sidecar must reap them).
func counts() (goroutines, fds, kids int) {
	return runtime.NumGoroutine(), countFDs(os.Getpid()), len(childrenAll(os.Getpid()))
}

const hostTimeout = 30 * time.Second

func ptr[T any](v T) *T { return &v }
