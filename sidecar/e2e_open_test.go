//go:build unix

package sidecar_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenAppliesEveryField(t *testing.T) {
	h := start(t)
	dir := t.TempDir()
	h.Open(proto.Open{
		TerminalID: "all",
		Cols:       100, Rows: 30,
		Cmd:  "/bin/sh",
		Args: []string{"-c", `printf 'size=%s pwd=%s foo=%s term=%s arg=%s\n' "$(stty size)" "$(pwd)" "$FOO" "$TERM" "$0"`, "zero"},
		Cwd:  &dir,
		Env:  map[string]string{"FOO": "bar baz"},
	})
	openedPID(t, h, "all")
	s := h.WaitOutput("all", "\n")
	assert.Contains(t, s.Output("all"), fmt.Sprintf("size=30 100 pwd=%s foo=bar baz term=xterm-256color arg=zero", dir))
	assert.EqualValues(t, 0, exitOf(t, h, "all").Fields["exitCode"])
}

// A terminal's environment is its sidecar's with OPEN's env over it (and
// TERM defaulted over the sidecar's). Through --persist the same holds of
// the bridge the host spawned, not of the server (started by another
// bridge, with another environment), whether the bridge hands the host's
// descriptors over or copies.
func TestOpenEnvMergesOverSidecarEnvironment(t *testing.T) {
	bridges := map[string][]string{"as spawned": nil}
	if len(sidecarArgs) > 0 {
		bridges["copying bridge"] = []string{"PTYPLEX_BRIDGE_COPY=1"}
		// The server runs before the bridges below start, so it was not
		// started with their environment (when this test runs first).
		pinged(start(t))
	}
	for name, extra := range bridges {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(sidecarBin, sidecarArgs...)
			cmd.Env = append(append(os.Environ(), "INHERITED=from-sidecar", "TERM=dumb", "SHADOWED=old"), extra...)
			h := hosttest.StartCmd(t, cmd)
			script := `echo "inh=$INHERITED sh=$SHADOWED term=$TERM"`
			h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script},
				Env: map[string]string{"SHADOWED": "new"}})
			h.Open(proto.Open{TerminalID: "b", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script},
				Env: map[string]string{"TERM": "vt100"}})
			// Both end before the host does, as a tidy host's do: a run
			// of these tests through one server again finds no terminal
			// of this one to re-adopt (whose screen it would be shown).
			exitOf(t, h, "a")
			exitOf(t, h, "b")
			assert.Contains(t, h.Now().Output("a"), "inh=from-sidecar sh=new term=xterm-256color")
			assert.Contains(t, h.Now().Output("b"), "inh=from-sidecar sh=old term=vt100")
		})
	}
}

// pinged waits until h's sidecar answered a PING: it is serving.
func pinged(h *hosttest.Host) {
	h.Send(proto.TypePing, []byte(`{"seq":1}`))
	h.MustUntil("a PONG", func(s hosttest.Snapshot) bool {
		for _, f := range s.Frames {
			if f.Type == proto.TypePong {
				return true
			}
		}
		return false
	})
}

func TestOpenZeroSizeIsClampedToOne(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "z", Cols: 0, Rows: 0, Cmd: "/bin/sh", Args: []string{"-c", "stty size"}})
	assert.Contains(t, h.WaitOutput("z", "\n").Output("z"), "1 1")
}

func TestOpenLooksUpBareCommandInChildPath(t *testing.T) {
	h := start(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "ptyplex-hello")
	require.NoError(t, testproc.WriteExecutable(script, []byte("#!/bin/sh\necho found-in-path\n"), 0o755))
	h.Open(proto.Open{TerminalID: "p", Cols: 80, Rows: 24, Cmd: "ptyplex-hello",
		Env: map[string]string{"PATH": dir + ":/usr/bin:/bin"}})
	h.WaitOutput("p", "found-in-path")
	// And the sidecar's own PATH serves a plain "sh".
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "sh", Args: []string{"-c", "echo via-path"}})
	h.WaitOutput("q", "via-path")
}

func TestChildIsSessionLeaderWithControllingTTY(t *testing.T) {
	h := start(t)
	// exec makes cat the child itself, so /proc/self/stat describes it.
	sh(h, "s", "exec cat /proc/self/stat")
	pid := openedPID(t, h, "s")
	exitOf(t, h, "s")
	out := h.Now().Output("s")
	i := strings.LastIndexByte(out, ')')
	require.Greater(t, i, 0, out)
	f := strings.Fields(out[i+1:])
	// state ppid pgrp session tty_nr tpgid
	assert.Equal(t, fmt.Sprint(pid), f[2], "process group")
	assert.Equal(t, fmt.Sprint(pid), f[3], "session")
	assert.NotEqual(t, "0", f[4], "controlling tty")
	assert.Equal(t, fmt.Sprint(pid), f[5], "foreground group of its tty")
}

// A sidecar started with signals ignored (nohup, a shell's background job)
// or blocked must still give children default dispositions and an empty
// mask.
func TestChildSignalsStartAtDefaults(t *testing.T) {
	wrapper := `import os, signal, sys
for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE, signal.SIGTERM, signal.SIGUSR1, signal.SIGTSTP):
    signal.signal(s, signal.SIG_IGN)
signal.signal(signal.SIGRTMIN, signal.SIG_IGN)  # one the Go runtime cannot catch
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2, signal.SIGALRM, signal.SIGWINCH})
os.execv(sys.argv[1], sys.argv[1:])`
	h := hosttest.StartCmd(t, exec.Command("python3", append([]string{"-c", wrapper, sidecarBin}, sidecarArgs...)...))
	sh(h, "sig", "exec grep -E '^Sig(Blk|Ign)' /proc/self/status")
	exitOf(t, h, "sig")
	out := h.Now().Output("sig")
	assert.Contains(t, out, "SigBlk:\t0000000000000000", out)
	assert.Contains(t, out, "SigIgn:\t0000000000000000", out)
}

func TestOpenedComesBeforeOutput(t *testing.T) {
	h := start(t)
	const n = 20
	for i := 0; i < n; i++ {
		sh(h, fmt.Sprint("t", i), "echo immediate")
	}
	s := h.MustUntil("all EXITs", func(s hosttest.Snapshot) bool {
		for i := 0; i < n; i++ {
			cs := s.Controls(fmt.Sprint("t", i))
			if len(cs) == 0 || cs[len(cs)-1].Type != proto.TypeExit {
				return false
			}
		}
		return true
	})
	seen := map[string]proto.Type{}
	for _, f := range s.Frames {
		var id string
		if f.Type == proto.TypeOutput {
			id, _, _ = proto.ParseData(f.Body)
		} else {
			var c proto.Opened
			require.NoError(t, json.Unmarshal(f.Body, &c))
			id = c.TerminalID
		}
		switch f.Type {
		case proto.TypeOpened:
			assert.NotContains(t, seen, id, "OPENED of %s after another frame", id)
		case proto.TypeOutput:
			assert.Equal(t, proto.TypeOpened, seen[id], "OUTPUT of %s before OPENED", id)
		case proto.TypeExit:
			assert.Contains(t, seen, id, "EXIT of %s before OPENED", id)
		}
		if f.Type != proto.TypeOutput || seen[id] == 0 {
			seen[id] = f.Type
		}
	}
}

func TestOpenErrorsAffectOnlyThatTerminal(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "live", Cols: 80, Rows: 24, Cmd: "cat"})
	openedPID(t, h, "live")

	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))

	cases := []struct {
		id, want string
		body     string
	}{
		{"live", "already exists", `{"terminalId":"live","cols":80,"rows":24,"cmd":"cat"}`},
		{"badcwd", "not a directory", fmt.Sprintf(`{"terminalId":"badcwd","cols":80,"rows":24,"cmd":"cat","cwd":%q}`, notDir)},
		{"nocwd", "no such file", `{"terminalId":"nocwd","cols":80,"rows":24,"cmd":"cat","cwd":"/does/not/exist"}`},
		{"nocmd", "not found", `{"terminalId":"nocmd","cols":80,"rows":24,"cmd":"ptyplex-no-such-command"}`},
		{"noexec", "permission denied", `{"terminalId":"noexec","cols":80,"rows":24,"cmd":"/etc/passwd"}`},
		{"badtype", "cols", `{"terminalId":"badtype","cols":"eighty","rows":24,"cmd":"cat"}`},
		{"toobig", "cols", `{"terminalId":"toobig","cols":70000,"rows":24,"cmd":"cat"}`},
		{"truncated", "malformed OPEN", `{"terminalId":"truncated","cols":80,"ro`},
		{"nocmdfield", "cmd", `{"terminalId":"nocmdfield","cols":80,"rows":24}`},
		// An ERROR quoting a 9 MiB command twice still fits in a frame
		// (the host's reader would take the stream for corrupt).
		{"hugecmd", "cannot start /nonexistent/aaaa", `{"terminalId":"hugecmd","cols":80,"rows":24,"cmd":"/nonexistent/` + strings.Repeat("a", 9<<20) + `"}`},
		// Invalid ids that are there to answer: refused under the id sent.
		{"", "empty", `{"terminalId":"","cols":80,"rows":24,"cmd":"cat"}`},
		{strings.Repeat("x", proto.MaxID+1), "limit", fmt.Sprintf(`{"terminalId":%q,"cols":80,"rows":24,"cmd":"cat"}`, strings.Repeat("x", proto.MaxID+1))},
	}
	for _, c := range cases {
		require.NoError(t, h.Send(proto.TypeOpen, []byte(c.body)))
	}
	// Unrecoverable ids: logged, no frame.
	require.NoError(t, h.Send(proto.TypeOpen, []byte(`this is not json`)))
	require.NoError(t, h.Send(proto.TypeOpen, []byte(`{"cols":80,"rows":24,"cmd":"cat"}`)))

	for _, c := range cases {
		e := h.WaitControl(proto.TypeError, c.id)
		assert.Contains(t, strings.ToLower(e.Fields["message"].(string)), strings.ToLower(c.want), "ERROR for %s", c.id)
	}
	h.Input("live", "still-here\n")
	h.WaitOutput("live", "still-here")
	for _, c := range h.Now().Controls("live") {
		assert.NotEqual(t, proto.TypeExit, c.Type, "the live terminal ended")
	}
	waitLog(t, h, regexp.MustCompile("without a recoverable terminalId"))
}

// An id that is not UTF-8 as sent decodes to U+FFFD: taken as decoded,
// "t\xff" and "t\xfe" were one terminal "t\ufffd", and frames naming the
// host's id reached a terminal of that other name. Each is refused
// (no child started) with an ERROR under the id as decoded; a frame
// naming it acts on no terminal, not even one really named "t\ufffd".
func TestOpenIDNotUTF8IsRefused(t *testing.T) {
	h := start(t)
	const shown = "t\ufffd"
	for _, id := range []string{"t\xff", "t\xfe"} {
		require.NoError(t, h.Send(proto.TypeOpen, []byte(`{"terminalId":"`+id+`","cols":80,"rows":24,"cmd":"cat"}`)))
	}
	s := h.MustUntil("two ERRORs", func(s hosttest.Snapshot) bool { return len(s.Controls(shown)) >= 2 })
	for _, c := range s.Controls(shown) {
		require.Equal(t, proto.TypeError, c.Type, "%s", c.Raw)
		assert.Contains(t, c.Fields["message"], "terminal id is not valid UTF-8", c.Raw)
	}
	if len(sidecarArgs) == 0 {
		h.WaitStderr(regexp.MustCompile(`OPEN .* failed: malformed OPEN: terminal id is not valid UTF-8 \(byte 0xfe`))
	}

	// A terminal that is named "t\ufffd" (those bytes are UTF-8) opens,
	// and frames for "t\xff" leave it alone.
	h.Open(proto.Open{TerminalID: shown, Cols: 80, Rows: 24, Cmd: "cat"})
	pid := openedPID(t, h, shown)
	require.NoError(t, h.Send(proto.TypeResize, []byte("{\"terminalId\":\"t\xff\",\"cols\":33,\"rows\":11}")))
	require.NoError(t, h.Send(proto.TypeClose, []byte("{\"terminalId\":\"t\xff\"}")))
	// Twice: the terminal's echo, then cat's own, which a CLOSE (its
	// SIGHUP sent before this INPUT was read) would have ended first.
	h.Input(shown, "alive\n")
	h.MustUntil("cat's echo", func(s hosttest.Snapshot) bool { return strings.Count(s.Output(shown), "alive") >= 2 })
	out, err := exec.Command("/bin/sh", "-c", fmt.Sprintf("stty size < /proc/%d/fd/0", pid)).Output()
	require.NoError(t, err)
	assert.Equal(t, "24 80\n", string(out), "RESIZE for t\\xff resized t\\ufffd")
	for _, c := range h.Now().Controls(shown) {
		assert.NotEqual(t, proto.TypeExit, c.Type, "CLOSE for t\\xff closed t\\ufffd")
	}
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: shown})
	exitOf(t, h, shown)
}

// An OPEN no child can be started with is refused, naming the field and
// why, and starts nothing: an environment name with '=' gave the child
// ZZ=B=v, an empty one was taken, a NUL anywhere got a bare "invalid
// argument" from the spawn. Other terminals go on.
func TestOpenRefusesWhatNoChildCanTake(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "live", Cols: 80, Rows: 24, Cmd: "cat"})
	openedPID(t, h, "live")
	cases := []struct{ id, extra, want string }{
		{"envEq", `"cmd":"sh","args":["-c","env"],"env":{"ZZ=B":"v"}`, `invalid environment variable name "ZZ=B": it has "="`},
		{"envEmpty", `"cmd":"sh","args":["-c","env"],"env":{"":"v"}`, `invalid environment variable name "": it is empty`},
		{"envNulKey", `"cmd":"sh","env":{"A\u0000B":"v"}`, `invalid environment variable name "A\x00B": it has a NUL byte`},
		{"envNulValue", `"cmd":"sh","env":{"A":"v\u0000w"}`, `the value of "A" has a NUL byte`},
		{"cmdNul", `"cmd":"s\u0000h"`, `cmd "s\x00h" has a NUL byte`},
		{"argNul", `"cmd":"sh","args":["-c","tr\u0000ue"]`, `args[1] "tr\x00ue" has a NUL byte`},
		{"cwdNul", `"cmd":"sh","cwd":"/t\u0000mp"`, `cwd "/t\x00mp" has a NUL byte`},
	}
	for _, c := range cases {
		require.NoError(t, h.Send(proto.TypeOpen, []byte(`{"terminalId":"`+c.id+`","cols":80,"rows":24,`+c.extra+`}`)))
	}
	for _, c := range cases {
		e := h.WaitControl(proto.TypeError, c.id)
		assert.Contains(t, e.Fields["message"], c.want, c.id)
	}
	// Every answer is in (frames are answered in order): none opened.
	h.Input("live", "still-here\n")
	h.WaitOutput("live", "still-here")
	for _, c := range cases {
		for _, x := range h.Now().Controls(c.id) {
			assert.Equal(t, proto.TypeError, x.Type, "%s: %s", c.id, x.Raw)
		}
	}
}

// A log line quoting what the host sent has its control characters
// escaped: an escape sequence in a command reached the terminal of
// whoever read stderr as it was.
func TestStderrEscapesHostControls(t *testing.T) {
	plainOnly(t, "the persistent server does not log a spawn it answers with ERROR")
	h := start(t)
	require.NoError(t, h.Send(proto.TypeOpen, []byte(`{"terminalId":"ctl","cols":80,"rows":24,"cmd":"/nonexistent/s\u001b[31mh\u0007\nforged"}`)))
	assert.Contains(t, h.WaitControl(proto.TypeError, "ctl").Fields["message"], "/nonexistent/s\x1b[31mh\a\nforged", "the ERROR quotes the command as sent")
	h.WaitStderr(regexp.MustCompile(`OPEN "ctl" failed: .*/nonexistent/s\\e\[31mh\\a\\nforged`))
	assert.NotRegexp(t, "[\x00-\x09\x0b-\x1f\x7f]", h.Stderr())
	assert.NotRegexp(t, "(?m)^forged", h.Stderr())
}

// commandLine, Windows' verbatim command line, is refused on Unix, where a
// child takes an argument vector: ERROR under the OPEN's id, saying to give
// args, and nothing started; the sidecar (or the persistent server, through
// the same decode) serves on, and OPENED does not list the feature.
func TestOpenCommandLineRefusedOnUnix(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "live", Cols: 80, Rows: 24, Cmd: "cat"})
	opened := h.WaitControl(proto.TypeOpened, "live")
	assert.NotContains(t, fmt.Sprint(opened.Fields["features"]), proto.FeatureCommandLine)
	require.NoError(t, h.Send(proto.TypeOpen, []byte(`{"terminalId":"cl","cols":80,"rows":24,"cmd":"/bin/sh","commandLine":"-c \"echo started\""}`)))
	require.NoError(t, h.Send(proto.TypeOpen, []byte(`{"terminalId":"both","cols":80,"rows":24,"cmd":"/bin/sh","args":["-c","echo started"],"commandLine":"-c x"}`)))
	assert.Equal(t, "commandLine is only for Windows: give args", h.WaitControl(proto.TypeError, "cl").Fields["message"])
	assert.Equal(t, "malformed OPEN: commandLine and args cannot both be given", h.WaitControl(proto.TypeError, "both").Fields["message"])
	h.Input("live", "still-here\n")
	h.WaitOutput("live", "still-here")
	for _, id := range []string{"cl", "both"} {
		for _, x := range h.Now().Controls(id) {
			assert.Equal(t, proto.TypeError, x.Type, "%s: %s", id, x.Raw)
		}
	}
	h.Open(proto.Open{TerminalID: "after", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo opened-after"}})
	h.WaitOutput("after", "opened-after")
}
