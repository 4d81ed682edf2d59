package proto

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two env names that are one variable on Windows: ParseOpen keeps the
// order they were sent in (each at its last appearance), so the Windows
// sidecar can let the later one win every time; a map alone has no order.
func TestParseOpenEnvOrder(t *testing.T) {
	o, err := ParseOpen([]byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"c","env":{"ZVAR":"a","Zvar":"first","A":"1","ZVAR":"second"}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"Zvar", "A", "ZVAR"}, o.EnvOrder)
	assert.Equal(t, "second", o.Env["ZVAR"])

	o, err = ParseOpen([]byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"c","env":{"Zvar":"first","ZVAR":"second"}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"Zvar", "ZVAR"}, o.EnvOrder)

	// No two names alike: no order needed, none kept.
	o, err = ParseOpen([]byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"c","env":{"B":"1","A":"2"}}`))
	require.NoError(t, err)
	assert.Nil(t, o.EnvOrder)
}
