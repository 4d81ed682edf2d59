//go:build unix

package persist_test

import (
	"bytes"
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// numberedLines is what `seq 1 n` shows through a PTY (ONLCR on).
func numberedLines(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// The host is SIGKILLed in the middle of floods in 8 terminals, round
// after round; each new host attaches at the offsets the dead one had
// received, and what all hosts received, joined, is byte for byte what
// the programs wrote. Park mode keeps the floods from running past the
// journal while no host is attached, and the hosts acknowledge what they
// read with CREDIT, so that bytes in flight when a host dies stay in the
// journal: it is only 64 KiB, less than the socket and pipe buffers.
//
// Both bridges: the one that hands the host's pipes to the server, and
// the one that copies (an older server, or PTYPLEX_BRIDGE_COPY=1).
func TestHostKilledMidFlood(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"handoff", "copy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			if mode == "copy" {
				s.env = append(s.env, bridgeCopyEnv)
			}
			hostKilledMidFlood(t, s)
		})
	}
}

func hostKilledMidFlood(t *testing.T, s *server) {
	const (
		terms  = 8
		lines  = 60000 // about 400 KB a terminal
		rounds = 20
		window = 16 << 10
	)
	want := numberedLines(lines)
	var got [terms]bytes.Buffer
	done := map[string]bool{}
	ids := make([]string, terms)
	for i := range ids {
		ids[i] = fmt.Sprintf("flood%d", i)
	}
	for round := 0; round < rounds; round++ {
		h := s.host()
		for i, id := range ids {
			if done[id] {
				continue
			}
			if round == 0 {
				h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": id, "cols": 80, "rows": 24,
					"cmd": "seq", "args": []string{"1", strconv.Itoa(lines)}, "detached": "park", "journal": 64 << 10, "credit": window})
			} else {
				h.SendJSON(proto.TypeAttach, map[string]any{"terminalId": id, "offset": got[i].Len(), "credit": window})
			}
		}
		autoCredit(h, ids)
		last := round == rounds-1
		// Each round waits for about 1/rounds of every stream more (or
		// its end); the last waits for every EXIT.
		target := len(want) * (round + 1) / rounds
		h.MustUntil(fmt.Sprintf("round %d's share of the floods", round), func(sn hosttest.Snapshot) bool {
			for i, id := range ids {
				if done[id] {
					continue
				}
				if _, ok := controlAfter(sn, 0, proto.TypeAttached, id); round > 0 && !ok {
					return false
				}
				if _, exited := controlAfter(sn, 0, proto.TypeExit, id); exited {
					continue
				}
				if last || got[i].Len()+len(sn.Outputs[id]) < target || len(sn.Outputs[id]) == 0 {
					return false
				}
			}
			return true
		})
		if !last {
			h.Cmd.Process.Signal(syscall.SIGKILL)
			h.WaitExit(hosttest.Timeout)
		}
		takeRound(t, h.Now(), round, ids, got[:], done)
	}
	checkStreams(t, ids, got[:], done, want)
}
