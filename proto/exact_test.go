package proto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys are matched exactly: one that names a field only in another case
// is an unknown key, ignored, where encoding/json alone would take it.
func TestKeysMatchExactly(t *testing.T) {
	_, err := ParseOpen([]byte(`{"terminalId":"m","cols":80,"rows":24,"CMD":"/bin/true"}`))
	assert.ErrorContains(t, err, "missing cmd")
	_, err = ParseOpen([]byte(`{"terminalId":"m","Cols":80,"rows":24,"cmd":"/bin/true"}`))
	assert.ErrorContains(t, err, "missing cols")

	// Of two spellings of the id, the exact one counts, wherever it is.
	for _, body := range []string{
		`{"terminalId":"ci-a","terminalid":"ci-b","cols":80,"rows":24,"cmd":"/bin/true"}`,
		`{"TERMINALID":"ci-b","terminalId":"ci-a","cols":80,"rows":24,"cmd":"/bin/true","env":{"TERMINALID":"kept"}}`,
	} {
		o, err := ParseOpen([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, "ci-a", o.TerminalID, body)
	}
	o, err := ParseOpen([]byte(`{"TERMINALID":"x","terminalId":"e","cols":80,"rows":24,"cmd":"c","env":{"Path":"/p"}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Path": "/p"}, o.Env, "keys inside env are the host's own")

	c, err := ParseClose([]byte(`{"TERMINALID":"c"}`))
	require.NoError(t, err)
	assert.Empty(t, c.TerminalID)
	cr, err := ParseCredit([]byte(`{"TerminalID":"k","BYTES":7}`))
	require.NoError(t, err)
	assert.Equal(t, Credit{}, cr)
	cr, err = ParseCredit([]byte(`{"terminalId":"k","bytes":7,"Bytes":9}`))
	require.NoError(t, err)
	assert.Equal(t, Credit{TerminalID: "k", Bytes: 7}, cr)
	r, err := ParseResize([]byte(`{"terminalId":"r","cols":100,"rows":30,"COLS":1}`))
	require.NoError(t, err)
	assert.Equal(t, Resize{TerminalID: "r", Cols: 100, Rows: 30}, r)
	s, err := ParseSignal([]byte(`{"terminalId":"s","Signal":"KILL","signal":"INT","TARGET":"child"}`))
	require.NoError(t, err)
	assert.Equal(t, Signal{TerminalID: "s", Signal: "INT"}, s)
}

// What is not one clean object reads as before: the errors are
// encoding/json's own.
func TestKeysMatchExactlyLeavesErrorsAlone(t *testing.T) {
	for _, body := range []string{`[]`, `{"terminalId":"a"`, `{"terminalId":"a"} x`, `{"Cmd":1,}`, ``} {
		var w openWire
		assert.Equal(t, body, string(exactKeys([]byte(body), &w)), body)
	}
	_, err := ParseOpen([]byte(`{"terminalId":"a","cols":80,"rows":24,"cmd":"c","CMD":"d"} {}`))
	assert.ErrorContains(t, err, "trailing data")
}
