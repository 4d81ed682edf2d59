//go:build unix

package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/screen"
	"github.com/ptyplex/ptyplex/session/wire"
)

// The reader takes, oldest first, the waiters that one chunk of output
// satisfies: the first activity waiter takes the flag, the next one keeps
// waiting, and an after_gen waiter whose generation has passed is taken
// whatever the flag says.
func TestFeedClaimsDueWaitersOldestFirst(t *testing.T) {
	st := newState(screen.New(80, 24, screen.Options{Scrollback: 100}))
	first := newWaiter(nil, true, 0)
	second := newWaiter(nil, true, 0)
	gen := newWaiter(nil, false, 0)
	later := newWaiter(nil, false, 100)
	st.waiters = []*waiter{first, second, gen, later}
	changed := st.changed

	_, due := st.feed([]byte("hello\r\n"))
	if len(due) != 2 || due[0] != first || due[1] != gen {
		t.Fatalf("due = %v, want the first activity waiter and the after_gen 0 one", due)
	}
	if !first.claimed || !gen.claimed || second.claimed || later.claimed {
		t.Fatalf("claimed: first %v second %v gen %v later %v", first.claimed, second.claimed, gen.claimed, later.claimed)
	}
	if a := first.data.Activity; a == nil || !*a {
		t.Errorf("first activity waiter's answer: %+v", first.data)
	}
	if g := gen.data.OutputGen; g == nil || *g != 7 {
		t.Errorf("after_gen waiter's answer: %+v, want output_gen 7", gen.data)
	}
	if len(st.waiters) != 2 || st.waiters[0] != second || st.waiters[1] != later {
		t.Fatalf("still waiting: %v, want the second activity waiter and after_gen 100", st.waiters)
	}
	if st.activity {
		t.Error("the activity flag stayed up after a waiter reported it")
	}
	select {
	case <-changed:
		t.Fatal("feed woke the change channel before the due answers were written")
	default:
	}

	// Output nobody is waiting for wakes the change channel at once.
	st.waiters = nil
	if _, due := st.feed([]byte("x")); len(due) != 0 {
		t.Fatalf("due with no waiters: %v", due)
	}
	select {
	case <-changed:
	default:
		t.Fatal("feed with no due waiter did not wake the change channel")
	}
}

// A pending activity WAIT and a pending after_gen WAIT are both answered
// when output arrives, with that output already on the screen, and their
// connections are then closed.
func TestOutputAnswersPendingWaits(t *testing.T) {
	d, parked := parkedDaemon(t)
	sock := d.SocketPath()
	act := sendRaw(t, sock, `{"type":"WAIT","activity":true}`)
	waitParked(t, parked)
	gen := sendRaw(t, sock, `{"type":"WAIT","after_gen":0}`)
	waitParked(t, parked)
	mustCall(t, sock, map[string]any{"type": "INPUT", "data": "hi\r"})

	for _, c := range []struct {
		name, want string
		conn       net.Conn
	}{{"activity", `"activity":true`, act}, {"after_gen", `"output_gen":`, gen}} {
		c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c.conn)
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"status":"ok"`) || !strings.Contains(line, c.want) ||
			strings.Contains(line, `"output_gen":0`) || !strings.Contains(line, `"exited":false`) {
			t.Fatalf("%s WAIT: %q %v", c.name, line, err)
		}
		// The answer came after the emulator had the output.
		d.st.mu.Lock()
		g := d.st.gen
		d.st.mu.Unlock()
		if g == 0 {
			t.Fatalf("%s WAIT answered before any output was fed", c.name)
		}
		if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
			t.Fatalf("%s WAIT: after the answer %q %v, want the connection closed", c.name, rest, err)
		}
	}
	ended := make(chan struct{})
	go func() { d.async.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a WAIT answered by the reader never ended")
	}
	d.st.mu.Lock()
	n := len(d.st.waiters)
	d.st.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d waiters left registered", n)
	}
}

// A pending activity WAIT whose client hangs up, or whose timeout passes,
// leaves nothing registered for the reader.
func TestEndedWaitsLeaveNoWaiter(t *testing.T) {
	d, parked := parkedDaemon(t)
	sock := d.SocketPath()
	c := sendRaw(t, sock, `{"type":"WAIT","activity":true}`)
	waitParked(t, parked)
	c.Close()
	r := mustCall(t, sock, map[string]any{"type": "WAIT", "after_gen": 1 << 40, "timeout_ms": 1})
	if !strings.Contains(string(r.Data), `"timed_out":true`) {
		t.Fatalf("WAIT after_gen with a 1 ms timeout: %s", r.Data)
	}
	// The abandoned WAIT ends on its own goroutine, at a moment only the
	// state shows: watch it (d.async.Wait here would race with the
	// daemon's Add for a request the race detector cannot see as done).
	deadline := time.Now().Add(10 * time.Second)
	for {
		d.st.mu.Lock()
		n := len(d.st.waiters)
		d.st.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters left registered: the abandoned WAIT is still pending", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// WAIT's after_gen is read in any JSON spelling of a whole number, and
// one beyond 64 bits is a generation never reached: the wait ends at its
// timeout, in both the output and the input forms. A fraction is refused.
func TestWaitAfterGenAnySpelling(t *testing.T) {
	d, _ := parkedDaemon(t)
	sock := d.SocketPath()
	for _, input := range []bool{false, true} {
		for _, gen := range []string{"1e30", "99999999999999999999", "5000.0", "1e400"} {
			req := `{"type":"WAIT","after_gen":` + gen + `,"timeout_ms":1,"input":` + fmt.Sprint(input) + `}`
			r, err := wire.Call(sock, json.RawMessage(req))
			if err != nil || r.Status != "ok" || !strings.Contains(string(r.Data), `"timed_out":true`) {
				t.Errorf("%s: %v %+v", req, err, r)
			}
		}
		req := `{"type":"WAIT","after_gen":1.5,"timeout_ms":1,"input":` + fmt.Sprint(input) + `}`
		r, err := wire.Call(sock, json.RawMessage(req))
		if err != nil || r.Status == "ok" || !strings.Contains(r.Error, "'after_gen' must be an integer") {
			t.Errorf("%s: %v %+v, want the integer error", req, err, r)
		}
	}
}
