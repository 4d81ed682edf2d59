//go:build unix

package persist_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
)

// upgradeError sends UPGRADE naming path on h and returns the ERROR's
// message.
func upgradeError(t *testing.T, h *hosttest.Host, path string) string {
	t.Helper()
	before := len(h.Now().Frames)
	h.SendJSON(proto.TypeUpgrade, proto.Upgrade{Path: path, Version: "test"})
	sn := h.MustUntil("ERROR for UPGRADE of "+path, func(sn hosttest.Snapshot) bool {
		_, ok := controlAfter(sn, before, proto.TypeError, "")
		return ok
	})
	m, _ := controlAfter(sn, before, proto.TypeError, "")
	msg, _ := m["message"].(string)
	return msg
}

// placeBinary copies the sidecar binary into dir (made with dirMode) as a
// file of fileMode, both set with chmod so that the umask has no say.
func placeBinary(t *testing.T, dir string, dirMode, fileMode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sidecarBin)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "ptyplex-sidecar")
	if err := testproc.WriteExecutable(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, fileMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	return p
}

// What an upgrade runs becomes the server, with every terminal's PTY
// master and journal, and a sidecar built from this module by anyone
// passes the checks of its build information and mark. So a binary that
// another user could have written or put in place is refused, as the Go
// client refuses a sidecar beside its host: writable by group or others,
// or in a directory others may write that is not sticky. A FIFO at the
// path is refused at once: its open used to block for ever, with the
// upgrade under way, and every later UPGRADE was refused as "another
// upgrade is under way". A sidecar of ours in a sticky directory still
// goes through.
func TestUpgradeRefusesWhatOthersCouldWrite(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	pid := int(h.WaitControl(proto.TypeOpened, "c").Fields["pid"].(float64))
	base := t.TempDir()

	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if msg := upgradeError(t, h, fifo); !strings.Contains(msg, "UPGRADE refused: "+fifo+" is not an executable file") {
		t.Errorf("UPGRADE to a FIFO: ERROR %q", msg)
	}
	if d := time.Since(start); d > hosttest.Timeout/2 {
		t.Errorf("UPGRADE to a FIFO took %v to be refused", d)
	}

	for _, c := range []struct {
		path, why string
	}{
		{placeBinary(t, filepath.Join(base, "w"), 0o700, 0o777), "could have been put there or changed by another user: other users may write to it (mode 0777)"},
		{placeBinary(t, filepath.Join(base, "g"), 0o700, 0o775), "other users may write to it (mode 0775)"},
		{placeBinary(t, filepath.Join(base, "open"), 0o777, 0o755), "other users may write to its directory " + filepath.Join(base, "open") + " (mode 0777), and so replace it"},
	} {
		if msg := upgradeError(t, h, c.path); !strings.Contains(msg, "UPGRADE refused: "+c.path+" ") || !strings.Contains(msg, c.why) {
			t.Errorf("UPGRADE to %s: ERROR %q, want it to say %q", c.path, msg, c.why)
		}
	}
	if got := pids(t, h)["c"]; got != pid {
		t.Fatalf("terminal c has pid %d, want %d", got, pid)
	}

	// Not wedged by the FIFO, and not refusing a sticky directory: the
	// upgrade to a binary of ours in a 1777 directory goes through.
	sticky := placeBinary(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky, 0o755)
	if _, n := s.upgradeTo(sticky); n != 1 {
		t.Fatalf("the upgrade reported %d terminals, want 1", n)
	}
}

// An upgrade refuses a binary another user owns, wherever it is.
func TestUpgradeRefusesAnotherUsersBinary(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that acts as a second user")
		}
		t.Fatal("this test gives a file to a second local user and must run as root (CI does); set PTYPLEX_NO_ROOT_TESTS=1 to skip it")
	}
	s := newUpgradeServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "c")
	uid, gid := otherUser(t)
	p := placeBinary(t, t.TempDir(), 0o700, 0o755)
	if err := os.Chown(p, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	want := "could have been put there or changed by another user: it belongs to uid " + strconv.FormatUint(uint64(uid), 10) + ", not to us (uid 0) or root"
	if msg := upgradeError(t, h, p); !strings.Contains(msg, want) {
		t.Errorf("UPGRADE to another user's binary: ERROR %q, want it to say %q", msg, want)
	}
}
