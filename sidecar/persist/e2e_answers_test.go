//go:build unix

package persist_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// detachedRun runs script in a terminal of a new server under bash, the
// terminal in raw mode without echo, with no host attached: the host that
// opens it sees "ready", DETACHes, and only then lets the script go on (it
// waits for a file). before runs before "ready", while attached. The
// script reports with `report TEXT`; detachedRun returns the host
// (detached) and the file where the report goes.
func detachedRun(t *testing.T, before, script string) (*hosttest.Host, string) {
	t.Helper()
	s := newServer(t)
	h := s.host()
	dir := t.TempDir()
	gate, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/bash", Args: []string{"-c",
		`report() { printf '%s' "$1" > ` + out + `.tmp && mv ` + out + `.tmp ` + out + `; };` +
			"stty raw -echo; " + before + "\nprintf ready; while [ ! -e " + gate + " ]; do sleep 0.01; done; " +
			script + "; read -r x"}})
	h.WaitControl(proto.TypeOpened, "q")
	h.WaitOutput("q", "ready")
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "q"})
	h.WaitControl(proto.TypeDetached, "q")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return h, out
}

// waitFile waits, within hosttest.Timeout, for the file the program
// writes when it has its answers, and returns it. The program's progress
// has no event the test can wait on but this file (no host is attached,
// by design), so it looks again every few milliseconds.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program never wrote %s: its queries were not answered within %v", path, hosttest.Timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With no host attached, a program's DA1, DA2, XTVERSION and DSR 5 are
// answered as xterm answers them (the screen package's answers), each
// once: the program reads them in turn, and the last read finds nothing
// else queued before its own marker.
func TestDetachedAnswersIdentity(t *testing.T) {
	t.Parallel()
	_, out := detachedRun(t, "", `printf '\033[c'; IFS= read -r -d c a; printf '\033[>c'; IFS= read -r -d c b;`+
		` printf '\033[>q'; IFS= read -r -d '\' v; printf '\033[5n'; IFS= read -r -d n s;`+
		` report "$(printf 'da1=%s da2=%s ver=%s dsr=%s' "${a#?}" "${b#?}" "${v:1:${#v}-2}" "${s#?}")"`)
	got := waitFile(t, out)
	want := regexp.MustCompile(`^da1=\[\?62;22 da2=\[>1;10;0 ver=P>\|ptyplex\([^)]+\) dsr=\[0$`)
	if !want.MatchString(got) {
		t.Fatalf("answers %q, want %v", got, want)
	}
}

// A query split across two reads of the PTY is answered all the same.
func TestDetachedAnswersSplitQuery(t *testing.T) {
	t.Parallel()
	_, out := detachedRun(t, "", `printf '\033['; sleep 0.2; printf 'c'; IFS= read -r -d c a; report "da1=${a#?}"`)
	if got := waitFile(t, out); got != "da1=[?62;22" {
		t.Fatalf("answer %q, want da1=[?62;22", got)
	}
}

// DSR 6 answers where the cursor really is and DECRQM what the program
// set, both from what it drew: before the detach (the alternate screen,
// a cursor move, "ready") and after.
func TestDetachedAnswersCursorAndModes(t *testing.T) {
	t.Parallel()
	_, out := detachedRun(t, `printf '\033[?1049h\033[3;4H'`,
		`printf '\033[6n'; IFS= read -r -d R c1; printf '\033[?1049$p'; IFS= read -r -d y m1;`+
			` printf '\033[10;20Hab\033[?2004h\033[?2004$p'; IFS= read -r -d y m2;`+
			` printf '\033[?2004l\033[?2004$p\033[6n'; IFS= read -r -d y m3; IFS= read -r -d R c2;`+
			` printf '\033[?6n'; IFS= read -r -d R c3;`+
			` report "${c1#?}|${m1#?}|${m2#?}|${m3#?}|${c2#?}|${c3#?}"`)
	want := `[3;9|[?1049;1$|[?2004;1$|[?2004;2$|[10;22|[?10;22`
	if got := waitFile(t, out); got != want {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// A mode the program set long before its query, further back than the
// tail the answers' screen is rendered from (stateMaxInput), is reported
// as set: the screen starts from the mode tracker's state there.
func TestDetachedAnswersModesSetLongBefore(t *testing.T) {
	t.Parallel()
	_, out := detachedRun(t, `printf '\033[?1h\033[?2004h'; head -c 400000 /dev/zero | tr '\0' x`,
		`printf '\033[?1$p'; IFS= read -r -d y m1; printf '\033[?2004$p'; IFS= read -r -d y m2; printf '\033[?1004$p'; IFS= read -r -d y m3;`+
			` report "${m1#?}|${m2#?}|${m3#?}"`)
	want := `[?1;1$|[?2004;1$|[?1004;2$`
	if got := waitFile(t, out); got != want {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// DECRQSS answers the pen, the scroll region and the cursor style the
// program set, before the detach and after; XTGETTCAP the terminal's
// name, and "unknown" for a name it has no value for.
func TestDetachedAnswersSettingsAndTermcap(t *testing.T) {
	t.Parallel()
	_, out := detachedRun(t, `printf '\033[1;31m\033[5 q'`,
		`printf '\033P$qm\033\\'; IFS= read -r -d '\' a; printf '\033P$q q\033\\'; IFS= read -r -d '\' b;`+
			` printf '\033[2;20r\033P$qr\033\\'; IFS= read -r -d '\' c;`+
			` printf '\033P+q544e\033\\'; IFS= read -r -d '\' d; printf '\033P+q6b6375\033\\'; IFS= read -r -d '\' e;`+
			` report "$(printf '%s|%s|%s|%s|%s' "${a:1:${#a}-2}" "${b:1:${#b}-2}" "${c:1:${#c}-2}" "${d:1:${#d}-2}" "${e:1:${#e}-2}")"`)
	want := `P1$r0;1;31m|P1$r5 q|P1$r2;20r|P1+r544e=787465726D2D323536636F6C6F72|P0+r6b6375`
	if got := waitFile(t, out); got != want {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// The colours a holder's emulator reported (its reply to a colour query,
// which passes through INPUT) are what the server answers once that
// holder is gone; those nobody reported are xterm's defaults.
func TestDetachedAnswersColoursOfLastHolder(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	dir := t.TempDir()
	gate, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/bash", Args: []string{"-c",
		`stty raw -echo; printf '\033]11;?\033\\'; IFS= read -r -d '\' r; printf 'learned'; while [ ! -e ` + gate + ` ]; do sleep 0.01; done;` +
			` printf '\033]11;?\033\\'; IFS= read -r -d '\' bg; printf '\033]10;?\007'; IFS= read -r -d $'\a' fg;` +
			` printf '\033]4;1;?\007'; IFS= read -r -d $'\a' p1;` +
			` printf '%s|%s|%s' "${bg:1:${#bg}-2}" "${fg#?}" "${p1#?}" > ` + out + `.tmp; mv ` + out + `.tmp ` + out + `; read -r x`}})
	h.WaitOutput("q", "\x1b]11;?\x1b\\")
	// The host's emulator answers the query, as xterm.js would.
	h.Input("q", "\x1b]11;rgb:1010/2020/3030\x1b\\")
	h.WaitOutput("q", "learned")
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "q"})
	h.WaitControl(proto.TypeDetached, "q")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := `]11;rgb:1010/2020/3030|]10;rgb:ffff/ffff/ffff|]4;1;rgb:cdcd/0000/0000`
	if got := waitFile(t, out); got != want {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// A colour the program set while a host held the terminal is still its
// colour once the host is gone, and a colour the program resets goes back
// to the one the holder's emulator reported (what a reset shows there),
// not to xterm's default.
func TestDetachedAnswersColoursSetWhileHeldAndReset(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	dir := t.TempDir()
	gate, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/bash", Args: []string{"-c",
		`stty raw -echo; printf '\033]4;1;rgb:ab/cd/ef\007\033]10;?\033\\'; IFS= read -r -d '\' r; printf 'learned';` +
			` while [ ! -e ` + gate + ` ]; do sleep 0.01; done;` +
			` printf '\033]4;1;?\007'; IFS= read -r -d $'\a' p1;` +
			` printf '\033]10;rgb:ff/ff/00\007\033]10;?\007'; IFS= read -r -d $'\a' fg1;` +
			` printf '\033]110\007\033]10;?\007'; IFS= read -r -d $'\a' fg2;` +
			` printf '\033]104;1\007\033]4;1;?\007'; IFS= read -r -d $'\a' p2;` +
			` printf '%s|%s|%s|%s' "${p1#?}" "${fg1#?}" "${fg2#?}" "${p2#?}" > ` + out + `.tmp; mv ` + out + `.tmp ` + out + `; read -r x`}})
	h.WaitOutput("q", "\x1b]10;?\x1b\\")
	h.Input("q", "\x1b]10;rgb:1010/2020/3030\x1b\\") // the host's emulator answers
	h.WaitOutput("q", "learned")
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "q"})
	h.WaitControl(proto.TypeDetached, "q")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := `]4;1;rgb:abab/cdcd/efef|]10;rgb:ffff/ffff/0000|]10;rgb:1010/2020/3030|]4;1;rgb:cdcd/0000/0000`
	if got := waitFile(t, out); got != want {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// A host that attaches at an offset before a query the server answered
// is replayed the query, and its emulator answers it again: the program
// gets one answer, and the key typed next is what it reads next.
func TestReplayedQueryAnsweredOnce(t *testing.T) {
	t.Parallel()
	h, out := detachedRun(t, "", `printf '\033[c'; IFS= read -r -d c a; report "${a#?}"; IFS= read -r -n 1 k; printf 'next=%q.' "$k"`)
	if got := waitFile(t, out); got != "[?62;22" {
		t.Fatalf("answer %q, want [?62;22", got)
	}
	h.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "q", "offset": len("ready")})
	h.WaitControl(proto.TypeAttached, "q")
	h.WaitOutput("q", "ready\x1b[c")
	h.Input("q", "\x1b[?1;2c") // what xterm.js answers to the replayed DA1
	h.Input("q", "x")
	h.WaitOutput("q", ".")
	if got := h.Now().Output("q"); !strings.HasSuffix(got, "\x1b[cnext=x.") {
		t.Fatalf("output %q: the program read the host's second answer before its x", got)
	}
}

// With a holder attached nothing changes: the server does not answer,
// the holder does. The program's first byte of input after its DA1 is
// what the host typed.
func TestAttachedHolderAnswersAlone(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/bash", Args: []string{"-c",
		`stty raw -echo; printf 'ready\033[c'; IFS= read -r -n 1 k; printf 'first=%q.' "$k"; read -r x`}})
	h.WaitOutput("q", "ready\x1b[c")
	h.Input("q", "x")
	h.WaitOutput("q", ".")
	if got := h.Now().Output("q"); got != "ready\x1b[cfirst=x." {
		t.Fatalf("output %q: the program read something before the host's x", got)
	}
}

// A real vim started with nobody attached gets its answers (its DA2
// fires TermResponse, which writes v:termresponse to a file), and its
// screen is there when a host attaches.
func TestDetachedVimStarts(t *testing.T) {
	t.Parallel()
	vim, err := exec.LookPath("vim")
	if err != nil {
		t.Skip("no vim on this machine")
	}
	dir := t.TempDir()
	file, resp := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "resp")
	if err := os.WriteFile(file, []byte("a line vim shows\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, _ := detachedRun(t, "stty sane", `exec `+vim+` -u NONE -i NONE -N --cmd 'au TermResponse * call writefile([v:termresponse], "`+resp+`.tmp") | call rename("`+resp+`.tmp", "`+resp+`")' `+file)
	if got := waitFile(t, resp); got != "\x1b[>1;10;0c\n" {
		t.Fatalf("vim's v:termresponse %q, want the DA2 answer", got)
	}
	h.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "q", "offset": 0})
	h.WaitControl(proto.TypeAttached, "q")
	h.WaitOutput("q", "a line vim shows")
	if !strings.Contains(h.Now().Output("q"), "notes.txt") {
		t.Errorf("vim's status line is missing from what the host got")
	}
	h.Input("q", "\x1b:qa!\r")
	h.WaitControl(proto.TypeExit, "q")
}

// A real htop started with nobody attached runs, and its screen is there
// when a host attaches.
func TestDetachedHtopStarts(t *testing.T) {
	t.Parallel()
	htop, err := exec.LookPath("htop")
	if err != nil {
		t.Skip("no htop on this machine")
	}
	s := newServer(t)
	h := s.host()
	// DETACH right behind the OPEN: htop starts with nobody attached.
	h.Open(proto.Open{TerminalID: "q", Cols: 100, Rows: 30, Cmd: htop})
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "q"})
	h.WaitControl(proto.TypeDetached, "q")
	listUntil(t, h, "htop drawing detached", func(l proto.Listed) bool {
		e, ok := entry(l, "q")
		return ok && !e.Attached && e.Produced > 1000
	})
	h.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "q", "offset": 0})
	h.WaitControl(proto.TypeAttached, "q")
	h.WaitOutput("q", "Load average")
	h.Input("q", "q")
	h.WaitControl(proto.TypeExit, "q")
}

// A live upgrade keeps the colours the answers while detached give: the
// one the program set and the one its last holder's emulator reported.
// No program notices an upgrade, and one that asks after it (vim, for the
// background) must not see another terminal; the new image answered
// both with the defaults.
func TestUpgradeKeepsDetachedColours(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	bin := copyBinary(t)
	h := s.host()
	dir := t.TempDir()
	gate, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/bash", Args: []string{"-c",
		`stty raw -echo; printf '\033]4;1;rgb:ab/cd/ef\007\033]11;?\033\\'; IFS= read -r -d '\' r; printf 'learned';` +
			` while [ ! -e ` + gate + ` ]; do sleep 0.01; done;` +
			` printf '\033]4;1;?\007'; IFS= read -r -d $'\a' p1;` +
			` printf '\033]11;?\007'; IFS= read -r -d $'\a' bg;` +
			` printf '%s|%s' "${p1#?}" "${bg#?}" > ` + out + `.tmp; mv ` + out + `.tmp ` + out + `; read -r x`}})
	h.WaitOutput("q", "\x1b]11;?\x1b\\")
	h.Input("q", "\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\") // the host's emulator answers
	h.WaitOutput("q", "learned")
	s.upgradeTo(bin) // which ends h's connection: the terminal is detached
	h.WaitExit(hosttest.Timeout)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := `]4;1;rgb:abab/cdcd/efef|]11;rgb:1e1e/1e1e/1e1e`
	if got := waitFile(t, out); got != want {
		t.Fatalf("answers after the upgrade %q, want %q", got, want)
	}
}

// The replies the server gave while detached survive a live upgrade: a
// host that attaches to the new image at an offset before the query is
// replayed it, its emulator answers again, and that second answer is
// taken out as it is without an upgrade (TestReplayedQueryAnsweredOnce).
// The new image did not know the old one had answered, and the program
// read the second DA1 reply as input before the key typed next.
func TestUpgradeKeepsAnsweredQueries(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	bin := copyBinary(t)
	h := s.host()
	dir := t.TempDir()
	gate, out := filepath.Join(dir, "go"), filepath.Join(dir, "out")
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/bash", Args: []string{"-c",
		`stty raw -echo; printf ready; while [ ! -e ` + gate + ` ]; do sleep 0.01; done;` +
			` printf '\033[c'; IFS= read -r -d c a; printf '%s' "${a#?}" > ` + out + `.tmp; mv ` + out + `.tmp ` + out + `;` +
			` IFS= read -r -n 1 k; printf 'next=%q.' "$k"; read -r x`}})
	h.WaitOutput("q", "ready")
	h.SendJSON(proto.TypeDetach, map[string]any{"terminalId": "q"})
	h.WaitControl(proto.TypeDetached, "q")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, out); got != "[?62;22" {
		t.Fatalf("answer %q, want [?62;22", got)
	}
	s.upgradeTo(bin)
	h.WaitExit(hosttest.Timeout)
	h2 := s.host()
	h2.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "q", "offset": len("ready")})
	h2.WaitControl(proto.TypeAttached, "q")
	h2.WaitOutput("q", "\x1b[c")
	h2.Input("q", "\x1b[?1;2c") // what xterm.js answers to the replayed DA1
	h2.Input("q", "x")
	h2.WaitOutput("q", ".")
	if got := h2.Now().Output("q"); !strings.HasSuffix(got, "\x1b[cnext=x.") {
		t.Fatalf("output %q: the program read the host's second answer before its x", got)
	}
}
