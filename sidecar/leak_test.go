//go:build unix

package sidecar

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// TestNoGoroutineOrDescriptorOutlivesTerminal runs a sidecar in-process so
// it can count its goroutines and descriptors.
func TestNoGoroutineOrDescriptorOutlivesTerminal(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sc := New(outW, Options{})
	ran := make(chan error, 1)
	go func() { ran <- sc.Run(inR) }()
	exits := make(chan string, 100)
	s := client.NewStream(outR, inW, client.StreamOptions{Handle: func(f proto.Frame) error {
		if f.Type == proto.TypeExit || f.Type == proto.TypeError {
			exits <- string(f.Body)
		}
		return nil
	}})
	go func() {
		<-s.ReadDone()
		close(exits)
	}()
	send := func(ft proto.Type, v any) {
		require.NoError(t, s.SendJSON(ft, v))
	}
	runBatch := func(n int) {
		for i := 0; i < n; i++ {
			id := fmt.Sprint("t", i)
			switch i % 4 {
			case 0:
				send(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo hi; exit 2"}})
			case 1:
				send(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "kill -9 $$"}})
			case 2:
				send(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "cat"})
				send(proto.TypeClose, proto.Close{TerminalID: id})
			case 3:
				send(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/no/such/program"})
			}
		}
		for i := 0; i < n; i++ {
			select {
			case _, ok := <-exits:
				require.True(t, ok, "sidecar output ended")
			case <-time.After(15 * time.Second):
				t.Fatalf("only %d of %d terminals ended", i, n)
			}
		}
	}
	runBatch(4) // warm up pools and the poller
	goroutines, fds := settled(t, -1, -1)
	runBatch(40)
	settled(t, goroutines, fds)

	s.CloseInput()
	require.NoError(t, <-ran)
}

// settled waits until the goroutine and descriptor counts are at most the
// given ones (-1: any) and returns them.
func settled(t *testing.T, goroutines, fds int) (int, int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), countFDs(t)
		if (goroutines < 0 || g <= goroutines) && (fds < 0 || f <= fds) {
			return g, f
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines %d (want <= %d), fds %d (want <= %d)\n%s", g, goroutines, f, fds, buf[:n])
		}
		// No event marks a goroutine's return; yield and look again.
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}
