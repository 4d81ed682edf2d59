//go:build unix

package persist_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// A --journal-dir under a directory that other users may write (and that
// is not sticky) is refused, however private the journal directory
// itself: another user could rename it away and put one of theirs in its
// place. The server does not start and says why in its log; the bridge
// fails. The same path under a sticky directory (as /tmp is), and under
// one only its owner writes, is taken. A symbolic link on the way is
// followed: the directories it leads through count too.
func TestJournalDirRefusedUnderAnOpenParent(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	jdir := filepath.Join(shared, "journals")
	if err := os.Mkdir(jdir, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	refused := func(dir string) {
		t.Helper()
		s := newServer(t)
		h := s.host("--journal-dir", dir)
		if code, err := h.WaitExit(hosttest.Timeout); err != nil || code == 0 {
			t.Fatalf("--journal-dir %s: the bridge ended with %d, %v (want a failure)", dir, code, err)
		}
		want := "other users may write to " + shared + " above it (mode 0777)"
		if !strings.Contains(s.log(), want) {
			t.Fatalf("--journal-dir %s: the server's log does not say %q:\n%s", dir, want, s.log())
		}
	}
	taken := func(dir string) {
		t.Helper()
		s := newServer(t)
		h := s.host("--journal-dir", dir)
		h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "cat"})
		h.WaitControl(proto.TypeOpened, "c")
	}
	chmod := func(mode os.FileMode) {
		t.Helper()
		if err := os.Chmod(shared, mode); err != nil {
			t.Fatal(err)
		}
	}
	chmod(0o777)
	refused(jdir)
	refused(filepath.Join(link, "journals"))
	chmod(0o777 | os.ModeSticky)
	taken(jdir)
	chmod(0o755)
	taken(filepath.Join(link, "journals"))
}
