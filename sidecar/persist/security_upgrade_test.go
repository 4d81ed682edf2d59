//go:build linux

package persist_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/persist"
	"golang.org/x/sys/unix"
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
// been opened and verified, a script renamed over its path, or written
// over it in place (as a program that can write there could), is not
// what runs. The test binary runs itself as the helper execChecked,
// which does what the server does (openCandidate, then execCandidate's
// execve in place) in a process of its own.
func TestUpgradeRunsTheFileItChecked(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"rename", "in-place"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			out, err, bin := runExecChecked(t, how, "sealed")
			if err != nil || strings.Contains(out, "swapped-in") || !strings.HasPrefix(out, persist.HandoverLine()[:len(persist.HandoverBanner)]) {
				t.Fatalf("the checked file ran as %q (%v), want the sidecar's banner", out, err)
			}
			// The helper left the script at the path: that is what a
			// check of the path would have found.
			if b, err := os.ReadFile(bin); err != nil || !strings.Contains(string(b), "swapped-in") {
				t.Fatalf("the helper did not swap the file (%v): %.40q", err, b)
			}
		})
	}
}

// Where the kernel will not run a memfd, the upgrade runs the verified
// descriptor only if it still reads as what was checked: a file renamed
// over the path leaves the verified one open (it runs), a file written
// over in place is refused.
func TestUpgradeDescriptorFallback(t *testing.T) {
	t.Parallel()
	t.Run("rename", func(t *testing.T) {
		t.Parallel()
		out, err, _ := runExecChecked(t, "rename", "descriptor")
		if err != nil || !strings.HasPrefix(out, persist.HandoverLine()[:len(persist.HandoverBanner)]) {
			t.Fatalf("the verified descriptor ran as %q (%v), want the sidecar's banner", out, err)
		}
	})
	t.Run("in-place", func(t *testing.T) {
		t.Parallel()
		out, err, _ := runExecChecked(t, "in-place", "descriptor")
		if err == nil || strings.Contains(out, "swapped-in") || !strings.Contains(out, "changed since it was checked") {
			t.Fatalf("a verified file written over: %q (%v), want a refusal", out, err)
		}
	})
}

// runExecChecked runs the helper on a copy of the sidecar, swapping it
// as how says and executing it as exec says, and returns its output, its
// error and the copy's path.
func runExecChecked(t *testing.T, how, exec_ string) (string, error, string) {
	t.Helper()
	bin := copyBinary(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), execCheckedEnv+"="+strings.Join([]string{bin, how, exec_}, "|"))
	out, err := cmd.CombinedOutput()
	return string(out), err, bin
}

// execCheckedEnv names the binary execChecked verifies, swaps and runs,
// how it swaps it and how it runs it.
const execCheckedEnv = "PTYPLEX_TEST_EXEC_CHECKED"

func init() {
	if v := os.Getenv(execCheckedEnv); v != "" {
		f := strings.Split(v, "|")
		os.Exit(execChecked(f[0], f[1], f[2]))
	}
}

// execChecked verifies the sidecar at path, puts a script at its path
// (how: "rename" or "in-place"), makes sure a check of the path now
// refuses it, and executes the verified candidate with
// --persist-handover-format, as an upgrade would (exec_: "sealed" is
// execCandidate, "descriptor" its fallback). It returns only on failure,
// with the exit code the test sees.
func execChecked(path, how, exec_ string) int {
	c, to, err := persist.OpenCandidate(path)
	if err != nil || to == "" {
		fmt.Fprintf(os.Stderr, "the real sidecar is refused: %v (version %q)\n", err, to)
		return 2
	}
	script := []byte("#!/bin/sh\necho swapped-in\n")
	switch how {
	case "rename":
		swap := filepath.Join(filepath.Dir(path), "swap")
		if err := os.WriteFile(swap, script, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		err = os.Rename(swap, path)
	case "in-place":
		err = os.WriteFile(path, script, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, _, err := persist.OpenCandidate(path); err == nil || !strings.Contains(err.Error(), "not a Go program") {
		fmt.Fprintf(os.Stderr, "the script now at the path: %v, want a refusal\n", err)
		return 2
	}
	args := []string{path, "--persist-handover-format"}
	if exec_ == "sealed" {
		err = persist.ExecCandidate(c, args)
	} else {
		err = persist.ExecDescriptor(c, args)
	}
	fmt.Fprintf(os.Stderr, "exec: %v\n", err)
	return 3
}

// A verified candidate whose descriptor number has come to hold another
// file (closed by mistake elsewhere and reused) is refused, not run.
func TestUpgradeRefusesAReusedDescriptor(t *testing.T) {
	t.Parallel()
	c, _, err := persist.OpenCandidate(copyBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	script := filepath.Join(t.TempDir(), "other")
	if err := testproc.WriteExecutable(script, []byte("#!/bin/sh\necho other\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(script)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Dup2(int(other.Fd()), int(c.Fd())); err != nil {
		t.Fatal(err)
	}
	err = persist.ExecCandidate(c, []string{script})
	if err == nil || !strings.Contains(err.Error(), "no longer holds the verified") {
		t.Fatalf("exec of a reused descriptor: %v, want a refusal", err)
	}
}
