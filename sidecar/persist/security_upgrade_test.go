//go:build linux

package persist_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// A program in one of the server's terminals asks for an upgrade to a
// script that only prints the handover banner: run as the server, it
// would read every terminal's journal and hold every PTY master. The
// server refuses, whether the program asks itself or from a process that
// left the program's ancestry (forked into the background, its parent
// gone) but not its session, and the terminals go on with the same pid.
func TestUpgradeRefusedFromInsideATerminal(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "victim", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	pid := int(h.WaitControl(proto.TypeOpened, "victim").Fields["pid"].(float64))

	dir := t.TempDir()
	ran := filepath.Join(dir, "ran-as-server")
	fake := filepath.Join(dir, "fake-sidecar")
	body := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = --persist-handover-format ]; then echo '%s %d fake'; exit 0; fi\n: > %s\nexec %s \"$@\"\n",
		persist.HandoverBanner, persist.HandoverFormat, ran, sidecarBin)
	if err := os.WriteFile(fake, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	up := sidecarBin + " --persist " + s.name + " --upgrade --upgrade-binary " + fake
	env := map[string]string{"PATH": os.Getenv("PATH")}
	for _, kv := range s.env {
		if k, v, _ := strings.Cut(kv, "="); k == "PTYPLEX_RUNTIME_DIR" {
			env[k] = v
		}
	}
	h.Open(proto.Open{TerminalID: "in", Cols: 200, Rows: 24, Cmd: "/bin/sh", Env: env,
		Args: []string{"-c", up + " 2>&1; echo rc=$?; (sh -c '" + up + " 2>&1; echo bg-rc=$?' &); exec cat"}})
	h.WaitOutput("in", "bg-rc=")
	out := h.Now().Output("in")
	for _, want := range []string{"from inside one of this server's terminals", "rc=1", "bg-rc=1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the upgrade from inside a terminal: want %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the server ran the script a terminal named")
	}
	if got := pids(t, h)["victim"]; got != pid {
		t.Fatalf("terminal victim has pid %d, want %d", got, pid)
	}
	// From outside the terminals an upgrade still goes through.
	newPid, n := s.upgradeTo(copyBinary(t))
	if n != 2 || newPid <= 0 {
		t.Fatalf("the upgrade from outside: pid %d, %d terminals", newPid, n)
	}
}

// The binary an upgrade runs is the file that was checked: once it has
// been opened and verified, a script put at its path (renamed over it,
// as a program that can write there would) is not what runs.
func TestUpgradeRunsTheFileItChecked(t *testing.T) {
	bin := copyBinary(t)
	f, to, err := persist.OpenCandidate(bin)
	if err != nil {
		t.Fatalf("the real sidecar is refused: %v", err)
	}
	defer f.Close()
	if to == "" {
		t.Fatal("no version for the real sidecar")
	}
	swap := filepath.Join(filepath.Dir(bin), "swap")
	if err := os.WriteFile(swap, []byte("#!/bin/sh\necho swapped-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(swap, bin); err != nil {
		t.Fatal(err)
	}
	if _, _, err := persist.OpenCandidate(bin); err == nil || !strings.Contains(err.Error(), "not a Go program") {
		t.Fatalf("the script now at the path: %v, want a refusal", err)
	}
	// What the server executes: the open file, through /proc/self/fd.
	out, err := exec.Command(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), "--persist-handover-format").CombinedOutput()
	if err != nil || strings.Contains(string(out), "swapped-in") || !strings.HasPrefix(string(out), persist.HandoverLine()[:len(persist.HandoverBanner)]) {
		t.Fatalf("the checked file ran as %q (%v), want the sidecar's banner", out, err)
	}
}
