package main

import (
	"encoding/json"
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
	assert.Equal(t, false, st["app_cursor_keys"])
	assert.Equal(t, false, st["alt_screen"])
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
