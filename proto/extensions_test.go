package proto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSignal(t *testing.T) {
	for body, want := range map[string]string{
		`{"terminalId":"a","signal":"SIGINT"}`: "SIGINT",
		`{"terminalId":"a","signal":"term"}`:   "term",
		`{"terminalId":"a","signal":9}`:        "9",
	} {
		s, err := ParseSignal([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, Signal{TerminalID: "a", Signal: want}, s, body)
	}
	for body, msg := range map[string]string{
		`{"terminalId":"a"}`:               "missing signal",
		`{"terminalId":"a","signal":null}`: "missing signal",
		`{"terminalId":"a","signal":-1}`:   "neither a name nor a number",
		`{"terminalId":"a","signal":[1]}`:  "neither a name nor a number",
		`{"signal":"INT"}`:                 "missing terminalId",
		`{"terminalId":"a","signal":"INT"`: "malformed SIGNAL",
	} {
		_, err := ParseSignal([]byte(body))
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), msg, body)
	}
	for body, target := range map[string]string{
		`{"terminalId":"a","signal":"INT","target":"child"}`:      "child",
		`{"terminalId":"a","signal":"INT","target":"foreground"}`: "foreground",
		`{"terminalId":"a","signal":"INT","target":null}`:         "",
	} {
		s, err := ParseSignal([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, target, s.Target, body)
		assert.NoError(t, s.CheckTarget(), body)
	}
	s, err := ParseSignal([]byte(`{"terminalId":"a","signal":"INT","target":"group"}`))
	require.NoError(t, err)
	assert.ErrorContains(t, s.CheckTarget(), `unknown target "group"`)
	_, err = ParseSignal([]byte(`{"terminalId":"a","signal":"INT","target":1}`))
	assert.ErrorContains(t, err, "malformed SIGNAL")
	s, _ = ParseSignal([]byte(`{"terminalId":"a","signal":`))
	assert.Equal(t, "a", s.TerminalID, "id recovered from a truncated body")
}

func TestExtensionTypeNames(t *testing.T) {
	assert.Equal(t, "SIGNAL", TypeSignal.String())
	assert.Equal(t, "FOREGROUND", TypeForeground.String())
	assert.Equal(t, "FOREGROUND", TypeForegroundInfo.String())
}
