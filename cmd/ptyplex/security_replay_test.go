//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
)

// sidecarBinary builds ptyplex-sidecar for the replay tests.
func sidecarBinary(t *testing.T) string {
	t.Helper()
	p, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordFixture records a real session of the built sidecar: one
// terminal running script, to its end.
func recordFixture(t *testing.T, sidecar, script string) string {
	t.Helper()
	fix := filepath.Join(t.TempDir(), "evil.fixture")
	h := hosttest.Start(t, sidecar, "--record", fix)
	h.Open(proto.Open{TerminalID: "t1", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script}})
	h.WaitControl(proto.TypeExit, "t1")
	h.CloseStdin()
	if code, err := h.WaitExit(deadline); err != nil || code != 0 {
		t.Fatalf("recording sidecar: exit %d, %v", code, err)
	}
	return fix
}

// A fixture is a script: replaying one someone sent you ran its commands
// as you, silently. Now replay shows them and runs nothing without --yes;
// with --yes it replays as before.
func TestReplayNeedsYes(t *testing.T) {
	t.Parallel()
	sc := sidecarBinary(t)
	marker := filepath.Join(t.TempDir(), "ran")
	fix := recordFixture(t, sc, "echo pwned > "+marker+"; echo done")
	if err := os.Remove(marker); err != nil {
		t.Fatalf("recording did not run the script: %v", err)
	}

	r := ptyplex(t, "", "replay", "--sidecar", sc, fix)
	if fileExists(marker) {
		t.Fatalf("replay without --yes ran the fixture's command: %v", r)
	}
	if r.code != exitUsage {
		t.Errorf("replay without --yes: exit %d, want %d\n%v", r.code, exitUsage, r)
	}
	for _, want := range []string{"running as you", `t1: /bin/sh -c "echo pwned > ` + marker + `; echo done"`, "pass --yes"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("replay's refusal does not say %q:\n%v", want, r)
		}
	}

	r = ptyplex(t, "", "replay", "--yes", "--sidecar", sc, fix)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ok ") {
		t.Fatalf("replay --yes of a faithful recording: %v", r)
	}
	if !fileExists(marker) {
		t.Errorf("replay --yes did not run the command")
	}
	if !strings.Contains(r.stderr, "echo pwned") {
		t.Errorf("replay --yes does not show what it ran:\n%v", r)
	}
}

// hostile is a fixture whose every text field carries terminal escapes: a
// clipboard write (OSC 52), a title, and a carriage return that would
// let the printed command line hide the real one.
func hostileFixture(t *testing.T) string {
	t.Helper()
	const osc52 = "\x1b]52;c;aGFja2Vk\x07"
	// A valid OPEN (JSON escapes its controls), so the sidecar would run it.
	open := proto.Marshal(proto.Open{TerminalID: "t1", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", "rm -rf ~/x\r" + osc52 + "echo harmless"}})
	errBody := []byte(`{"terminalId":"t1","message":"` + "\x1b]0;owned\x07" + `"}`)
	note := []byte(`{"terminalId":"t1","output":"exact","why":"` + osc52 + "\u202e" + `"}`)
	recs := []record.Record{
		{Kind: record.FromHost, At: time.Millisecond, Raw: proto.AppendFrame(nil, proto.TypeOpen, open)},
		{Kind: record.FromSidecar, At: 2 * time.Millisecond, Raw: proto.AppendFrame(nil, proto.TypeError, errBody)},
		{Kind: record.Note, At: 3 * time.Millisecond, Raw: note},
		{Kind: record.HostEOF, At: 4 * time.Millisecond},
	}
	p := filepath.Join(t.TempDir(), "hostile.fixture")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := record.WriteAll(f, recs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// `replay --dump` printed note records and OPEN/ERROR bodies as they are,
// so the fixture's escape sequences reached the terminal of whoever
// inspected it (OSC 52 writes their clipboard). Now they are escaped; so
// is the list of commands replay shows before asking for --yes.
func TestReplayDumpEscapesControls(t *testing.T) {
	t.Parallel()
	fix := hostileFixture(t)
	dump := ptyplex(t, "", "replay", "--dump", fix)
	if dump.code != 0 {
		t.Fatalf("replay --dump: %v", dump)
	}
	shown := ptyplex(t, "", "replay", fix) // refuses without --yes, after showing the commands
	for name, out := range map[string]string{"replay --dump": dump.stdout, "replay's command list": shown.stderr} {
		if i := strings.IndexFunc(out, func(r rune) bool {
			return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '\u202e'
		}); i >= 0 {
			t.Errorf("%s prints the control %q:\n%q", name, out[i], out)
		}
	}
	for _, want := range []string{`\e]52;c;aGFja2Vk\a`, `\e]0;owned\a`, `\xe2\x80\xae`} {
		if !strings.Contains(dump.stdout, want) {
			t.Errorf("replay --dump does not show %q:\n%s", want, dump.stdout)
		}
	}
	if want := `t1: /bin/sh -c "rm -rf ~/x\r\x1b]52;c;aGFja2Vk\aecho harmless"`; !strings.Contains(shown.stderr, want) {
		t.Errorf("replay's command list does not show %q:\n%s", want, shown.stderr)
	}
}

// A fixture cut short (a recording whose sidecar was killed) is shown up
// to its last whole record, then where it ends; --dump still fails. It
// printed nothing of the whole records before.
func TestReplayDumpShowsACutFixtureUpToItsEnd(t *testing.T) {
	t.Parallel()
	whole, err := os.ReadFile(hostileFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.fixture")
	if err := os.WriteFile(cut, whole[:len(whole)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	dump := ptyplex(t, "", "replay", "--dump", cut)
	if dump.code != exitUsage || !strings.Contains(dump.stdout, "(the file ends inside record ") ||
		!strings.Contains(dump.stdout, `\e]0;owned\a`) || !strings.Contains(dump.stderr, "truncated") {
		t.Fatalf("replay --dump of a cut fixture: %v", dump)
	}
}
