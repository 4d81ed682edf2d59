//go:build unix

package persist_test

import (
	"path/filepath"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// After a crash (--journal-dir) a resume from before it is taken for a
// dead terminal (docs/persist.md). But once another host REVIVEd it
// after the crash, it is that host's: a resume from before the crash
// must be refused. The server after the crash counted from 0 again, so
// the REVIVE's generation (2) was below the generations the first
// server had given (3 here, thousands on a server that ran a while),
// and the old resume, "at or past" it, took the revived terminal away.
func TestResumeFromBeforeACrashRefusedAfterRevive(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	a := s.host("--journal-dir", jdir)
	openCat(t, a, "x1")
	openCat(t, a, "x2")
	n := openCat(t, a, "t1")
	a.Input("t1", "kept\n")
	a.WaitOutput("t1", "kept\r\nkept\r\n")
	killServer(t, s)
	a.WaitExit(hosttest.Timeout)

	b := s.host("--journal-dir", jdir)
	if at := attachAnswer(t, b, "t1", map[string]any{"terminalId": "t1", "offset": 0}); at.Type != proto.TypeAttached {
		t.Fatalf("B's ATTACH of the dead t1: %v %s", at.Type, at.Raw)
	}
	b.WaitOutput("t1", "kept\r\nkept\r\n")
	b.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "t1"})
	r := holdGenOf(t, b.WaitControl(proto.TypeOpened, "t1"))
	if r <= n {
		t.Logf("REVIVE's holdGen %d is not past %d, given before the crash", r, n)
	}
	mustRefuseResume(t, s.host("--journal-dir", jdir), "t1", n)
	b.Input("t1", "revived\n")
	b.WaitOutput("t1", "revived\r\nrevived\r\n")
}
