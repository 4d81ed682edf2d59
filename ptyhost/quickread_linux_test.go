package ptyhost

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// threads is how many threads the runtime has made (it never ends one).
func threads() int {
	s := []metrics.Sample{{Name: "/sched/threads/total:threads"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestReadSpanFloodGrowsNoThreadPerReader: 32 terminals flooding at once,
// each read by its own goroutine with ReadSpan, as the persistent server
// reads its terminals. A read that waits in the kernel keeps its P
// (quickRead), so the runtime makes no thread for each waiting reader.
// With plain system calls it made one for many of them (17 new threads
// here on the loaded 2-CPU VM, against 0; 55-68 in all in the server with
// 64 terminals).
func TestReadSpanFloodGrowsNoThreadPerReader(t *testing.T) {
	const n, each = 32, 2 << 20
	var procs []*Process
	defer func() {
		for _, p := range procs {
			p.Close()
		}
	}()
	for i := 0; i < n; i++ {
		p, err := Start(Config{Cmd: "yes", Args: []string{fmt.Sprint("terminal ", i)}, Cols: 80, Rows: 24})
		require.NoError(t, err)
		procs = append(procs, p)
	}
	before := threads()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, b := make([]byte, 32<<10), make([]byte, 32<<10)
			for got := 0; got < each; {
				k, err := p.ReadSpan(a, b)
				if err != nil {
					errs <- err
					return
				}
				got += k
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	grew := threads() - before
	t.Logf("%d readers, %d MiB each: %d threads more (GOMAXPROCS %d)", n, each>>20, grew, runtime.GOMAXPROCS(0))
	require.LessOrEqual(t, grew, runtime.GOMAXPROCS(0)+8, "the runtime made a thread for many of the waiting readers")
}

// TestReadSpanOnBlockingMasterStopsNothing: a master put back in blocking
// mode (by a process it was handed to, say) is read with a plain system
// call, so a ReadSpan waiting on it does not hold a P: the collector, which
// stops every P, still completes. With quickRead's read(2) for every mode
// it waited forever, and the test with it.
func TestReadSpanOnBlockingMasterStopsNothing(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "stty -echo; read x; printf 'got:%s' \"$x\"; read y"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	// The child is waiting for its line once its terminal stops echoing.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := p.InputState()
		require.NoError(t, err)
		if st == InputWaiting {
			break
		}
		require.True(t, time.Now().Before(deadline), "the child never waited for input")
		time.Sleep(time.Millisecond)
	}
	fd, err := p.MasterFD()
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fd, false))
	read := make(chan string, 1)
	go func() {
		var got []byte
		buf := make([]byte, 256)
		for !strings.Contains(string(got), "got:hello") {
			k, err := p.ReadSpan(buf, nil)
			if err != nil {
				read <- string(got) + " " + err.Error()
				return
			}
			got = append(got, buf[:k]...)
		}
		read <- string(got)
	}()
	// Wait until the reader is inside its read(2) of the blocking master.
	deadline = time.Now().Add(10 * time.Second)
	for !inRead(t, fd) {
		require.True(t, time.Now().Before(deadline), "the reader never reached read(2)")
		runtime.Gosched()
	}
	gc := make(chan struct{})
	go func() { runtime.GC(); close(gc) }()
	select {
	case <-gc:
	case <-time.After(10 * time.Second):
		t.Fatal("a collection did not complete while a ReadSpan waited on a blocking master")
	}
	// Back in non-blocking mode (a read of a blocking master reads on
	// until the buffer is full), and the waiting read returns the output.
	require.NoError(t, unix.SetNonblock(fd, true))
	_, err = p.Write([]byte("hello\n"))
	require.NoError(t, err)
	select {
	case s := <-read:
		require.Contains(t, s, "got:hello")
	case <-time.After(10 * time.Second):
		t.Fatal("the ReadSpan never returned the output")
	}
}

// inRead says whether a thread of this process is in read(2) of fd
// (/proc/self/task/*/syscall: the call's number, then its arguments).
func inRead(t *testing.T, fd int) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	want := fmt.Sprintf("%d 0x%x ", unix.SYS_READ, fd)
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/syscall")
		if err == nil && strings.HasPrefix(string(b), want) {
			return true
		}
	}
	return false
}
