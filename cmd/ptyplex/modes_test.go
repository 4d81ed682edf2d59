//go:build unix

package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// STATUS reports the terminal modes a client needs to encode keys.
func TestStatusReportsTerminalModes(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", `printf 'ready\n'; read x; printf '\033[?1h\033[?2004h\033[?1049h\033]2;my title\007shown\n'; read y`)
	s.waitText("ready")
	st := rawCall(t, s.sock, `{"type":"STATUS"}`)["data"].(map[string]any)
	assert.NotContains(t, st, "app_cursor_keys")
	assert.NotContains(t, st, "alt_screen")
	s.input("\n")
	s.waitText("shown")
	st = rawCall(t, s.sock, `{"type":"STATUS"}`)["data"].(map[string]any)
	assert.Equal(t, true, st["app_cursor_keys"])
	assert.Equal(t, true, st["bracketed_paste"])
	assert.Equal(t, true, st["alt_screen"])
	assert.Equal(t, "my title", st["title"])
}

// A program that stops reading its input must not wedge the daemon: INPUT
// gives up with an error and later requests are served.
func TestInputToProgramThatDoesNotRead(t *testing.T) {
	t.Parallel()
	// Non-canonical mode: a full input buffer blocks writers instead of
	// discarding bytes.
	s := start(t, "--", "sh", "-c", "stty raw -echo; echo ready; exec sleep 1000")
	s.waitText("ready")
	big, err := json.Marshal(map[string]string{"type": "INPUT", "data": strings.Repeat("x", 256<<10)})
	require.NoError(t, err)
	resp := rawCall(t, s.sock, string(big))
	assert.Equal(t, "error", resp["status"])
	assert.Contains(t, resp["error"], "has not read its input")
	st := rawCall(t, s.sock, `{"type":"STATUS"}`)
	assert.Equal(t, "ok", st["status"])
	assert.Equal(t, true, st["data"].(map[string]any)["running"])
}

// A session started from a parent that ignores and blocks signals (nohup,
// make, a supervisor) still gives its program default dispositions and an
// empty mask.
func TestProgramSignalsStartAtDefaults(t *testing.T) {
	t.Parallel()
	wrapper := `import os, signal, sys
for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE, signal.SIGTERM, signal.SIGTSTP, signal.SIGRTMIN):
    signal.signal(s, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2, signal.SIGALRM, signal.SIGWINCH})
os.execv(sys.argv[1], sys.argv[1:])`
	out, err := exec.Command("python3", "-c", wrapper, bin, "start", "--", "sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status; read x").Output()
	require.NoError(t, err)
	s := &sess{t: t}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Socket: "); ok {
			s.sock = v
		}
	}
	require.NotEmpty(t, s.sock, "%s", out)
	t.Cleanup(func() { ptyplex(t, "", "stop", "--socket", s.sock) })
	scr := s.waitText("SigIgn")
	// The tab after the colon is on screen as blanks.
	assert.Regexp(t, `SigBlk:\s+0{16}\n`, scr)
	assert.Regexp(t, `SigIgn:\s+0{16}\n`, scr)
}
