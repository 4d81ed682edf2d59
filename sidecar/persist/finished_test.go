//go:build unix

package persist

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// A finished terminal is one whose EXIT was written to its holder: it is
// kept, unlisted, until --keep-exited (24 h by default) for a host that
// died before reading that EXIT. What it keeps meanwhile must not grow
// the server with every command a host runs: only the journal's tail the
// host did not acknowledge, no goroutine, a small record.

// finishedServer is a server on a socket of its own, stopped with the
// test, and a connection to it.
func finishedServer(t *testing.T) (*Server, *net.UnixListener, net.Conn, <-chan proto.Frame) {
	t.Helper()
	s := New(Options{OrphanTimeout: -1})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Shutdown)
	c := dialServer(t, ln)
	t.Cleanup(func() { c.Close() })
	return s, ln, c, frames(t, c)
}

// runToExit reads c's frames about id until its EXIT, granting CREDIT
// for every OUTPUT as it arrives if grant is set, and returns the output.
func runToExit(t *testing.T, c net.Conn, fs <-chan proto.Frame, id string, grant bool) []byte {
	t.Helper()
	var out []byte
	deadline := time.After(60 * time.Second)
	for {
		select {
		case f, ok := <-fs:
			if !ok {
				t.Fatalf("%s: connection ended before its EXIT", id)
			}
			switch f.Type {
			case proto.TypeOutput:
				fid, data, err := proto.ParseData(f.Body)
				if err != nil || fid != id {
					t.Fatalf("OUTPUT %q (%v) while running %s", fid, err, id)
				}
				out = append(out, data...)
				if grant {
					send(t, c, proto.TypeCredit, proto.Credit{TerminalID: id, Bytes: uint64(len(data))})
				}
			case proto.TypeExit:
				var e map[string]any
				json.Unmarshal(f.Body, &e)
				if e["terminalId"] != id || e["exitCode"] != float64(0) {
					t.Fatalf("EXIT %s while running %s", f.Body, id)
				}
				return out
			case proto.TypeError:
				t.Fatalf("ERROR %s while running %s", f.Body, id)
			}
		case <-deadline:
			t.Fatalf("%s: no EXIT after %d bytes", id, len(out))
		}
	}
}

// pumps counts the goroutines that run the pump of one of s's terminals.
func pumps(s *Server) int {
	buf := make([]byte, 1<<24)
	stacks := string(buf[:runtime.Stack(buf, true)])
	n := 0
	for _, g := range strings.Split(stacks, "\n\n") {
		for _, t := range s.snapshotTerms() {
			if strings.Contains(g, fmt.Sprintf("persist.(*term).pump(%p", t)) || strings.Contains(g, fmt.Sprintf("persist.(*term).runPump(%p", t)) {
				n++
				break
			}
		}
	}
	return n
}

// waitFor polls cond (the server's state has no event to wait on) until
// it holds, failing after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}

// finishedState is what the server keeps of its finished terminals: how
// many there are, their journals' bytes and storage, and how many of
// them still have a screen for answers or room for more checkpoints.
type finishedState struct {
	n, bytes, storage, extra int
	reserved                 int64
}

func keptOfFinished(s *Server) finishedState {
	var st finishedState
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.end == exitWritten {
			st.n++
			st.bytes += t.j.size
			st.storage += t.j.allocated()
			t.answers.mu.Lock()
			if t.answers.idents != nil || cap(t.vt.Checkpoints()) > len(t.vt.Checkpoints()) {
				st.extra++
			}
			t.answers.mu.Unlock()
		}
		t.mu.Unlock()
	}
	s.mu.Lock()
	st.reserved = s.reserved
	s.mu.Unlock()
	return st
}

// Terminals that each print 1 MiB to a host that acknowledges every byte
// (CREDIT as it reads) and exit: once their EXITs were read, the server
// keeps none of their output and no goroutine for them, however many
// ran; their quotas are given back. A finished terminal attached again
// from offset 0 reports all of it lost, repaints, and ends with its EXIT
// again; its pump then ends again. (It kept all 1 MiB, replayed with
// lost 0, and a pump for each, for 24 hours.)
func TestFinishedTerminalsKeepNeitherOutputNorPump(t *testing.T) {
	s, _, c, fs := finishedServer(t)
	const size = 1 << 20
	for round, n := range []int{3, 6} {
		for i := range n {
			id := fmt.Sprintf("r%d-%d", round, i)
			send(t, c, proto.TypeOpen, map[string]any{"terminalId": id, "cols": 80, "rows": 24, "cmd": "/bin/sh",
				"args": []string{"-c", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size)}, "credit": 65536, "detached": "park"})
			if out := runToExit(t, c, fs, id, true); len(out) != size {
				t.Fatalf("%s: %d bytes of output, want %d", id, len(out), size)
			}
		}
		// The last CREDITs may follow the EXIT; a LIST after them is
		// answered once they were acted on (one connection's frames
		// are handled in order).
		send(t, c, proto.TypeList, struct{}{})
		var l proto.Listed
		if err := json.Unmarshal(next(t, fs, proto.TypeListed).Body, &l); err != nil || len(l.Terminals) != 0 {
			t.Fatalf("LISTED after every EXIT was read: %+v (%v)", l, err)
		}
		// (The pump cuts the journal once the EXIT is written.)
		var st finishedState
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			st = keptOfFinished(s)
			if st.n == 9-6*(1-round) && st.bytes == 0 && st.storage == 0 && st.extra == 0 && st.reserved == int64(st.n) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the server keeps of its %d finished terminals %d journal bytes in %d bytes of storage, "+
					"%d with room to spare, %d bytes of --journal-total (want none, 1 each)",
					round, st.n, st.bytes, st.storage, st.extra, st.reserved)
			}
		}
		waitFor(t, "the finished terminals' pumps to end", func() bool { return pumps(s) == 0 })
	}

	// What PROTOCOL.md promises a host that attaches again: ATTACHED
	// with the bytes no longer kept lost, a SNAPSHOT, the EXIT again.
	send(t, c, proto.TypeAttach, proto.Attach{TerminalID: "r1-0"})
	var at map[string]any
	json.Unmarshal(next(t, fs, proto.TypeAttached).Body, &at)
	if at["terminalId"] != "r1-0" || at["lost"] != float64(size) || at["offset"] != float64(0) {
		t.Fatalf("ATTACHED %v, want offset 0 and lost %d", at, size)
	}
	var saw []proto.Type
	for f := range fs {
		saw = append(saw, f.Type)
		if f.Type == proto.TypeExit {
			break
		}
	}
	if len(saw) != 2 || saw[0] != proto.TypeSnapshot {
		t.Fatalf("after ATTACHED: %v, want SNAPSHOT then EXIT", saw)
	}
	waitFor(t, "the pump of the terminal attached again to end", func() bool { return pumps(s) == 0 })
	if st := keptOfFinished(s); st.n != 9 || st.bytes != 0 {
		t.Fatalf("after its EXIT was read again: %+v", st)
	}
}

// A finished terminal keeps what its host had not acknowledged when the
// EXIT was written, and lets go of what later CREDITs acknowledge: a host
// that attaches from where its acknowledgements end gets the rest, none
// lost; one from before, a SNAPSHOT. The tail of a host without credit
// is the last finishedTail bytes. (Every finished terminal kept its whole
// journal up to 2.25 MiB, acknowledged or not.)
func TestFinishedTerminalKeepsWhatWasNotAcknowledged(t *testing.T) {
	s, ln, c, fs := finishedServer(t)
	const size, unread = 256 << 10, 1000
	// Credit for all of it: the EXIT is written with nothing acknowledged.
	send(t, c, proto.TypeOpen, map[string]any{"terminalId": "a", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size)}, "credit": size, "detached": "park"})
	out := runToExit(t, c, fs, "a", false)
	tail := func(id string) (start, end uint64) {
		t := s.lookup(id)
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.j.start, t.j.end
	}
	waitFor(t, "the finished terminal's pump to end", func() bool { return pumps(s) == 0 })
	if start, end := tail("a"); start != 0 || end != size {
		t.Fatalf("journal [%d, %d) with nothing acknowledged, want all %d bytes", start, end, size)
	}
	send(t, c, proto.TypeCredit, proto.Credit{TerminalID: "a", Bytes: size - unread})
	send(t, c, proto.TypeList, struct{}{})
	next(t, fs, proto.TypeListed)
	if start, end := tail("a"); start != size-unread || end != size {
		t.Fatalf("journal [%d, %d) once all but %d bytes were acknowledged", start, end, unread)
	}

	// A host that died before reading the rest, on a new connection.
	c2 := dialServer(t, ln)
	defer c2.Close()
	fs2 := frames(t, c2)
	send(t, c2, proto.TypeAttach, proto.Attach{TerminalID: "a", Offset: size - unread})
	var at map[string]any
	json.Unmarshal(next(t, fs2, proto.TypeAttached).Body, &at)
	if at["lost"] != float64(0) {
		t.Fatalf("ATTACHED %v from where the acknowledgements end, want lost 0", at)
	}
	if rest := runToExit(t, c2, fs2, "a", false); string(rest) != string(out[size-unread:]) {
		t.Fatalf("the late host got %d bytes, want the %d not acknowledged", len(rest), unread)
	}
	send(t, c2, proto.TypeAttach, proto.Attach{TerminalID: "a", Offset: 0})
	json.Unmarshal(next(t, fs2, proto.TypeAttached).Body, &at)
	if at["lost"] != float64(size-unread) {
		t.Fatalf("ATTACHED %v from offset 0, want lost %d", at, size-unread)
	}
	next(t, fs2, proto.TypeSnapshot)
	next(t, fs2, proto.TypeExit)

	// No credit, so nothing acknowledged: the last finishedTail bytes
	// stay, in storage of their size when that is small.
	send(t, c, proto.TypeOpen, map[string]any{"terminalId": "b", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args": []string{"-c", "echo done"}})
	runToExit(t, c, fs, "b", false)
	waitFor(t, "the finished terminals' pumps to end", func() bool { return pumps(s) == 0 })
	tb := s.lookup("b")
	tb.mu.Lock()
	size2, storage := tb.j.size, tb.j.allocated()
	tb.mu.Unlock()
	if size2 != len("done\r\n") || storage != size2 {
		t.Fatalf("a finished terminal without credit keeps %d bytes in %d bytes of storage, want %d in as many", size2, storage, len("done\r\n"))
	}
}
