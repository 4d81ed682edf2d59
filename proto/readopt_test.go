package proto

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OPEN's orphanMs: absent, null or 0 is the server's default, -1 never,
// a whole number of milliseconds its own; anything else is refused.
func TestOpenRequestOrphanMs(t *testing.T) {
	const base = `"terminalId":"a","cols":1,"rows":1,"cmd":"sh"`
	persist := func(extra string) (OpenPersist, error) {
		m, err := Decode(Frame{TypeOpen, []byte(`{` + base + extra + `}`)})
		require.NoError(t, err)
		return m.(OpenRequest).Persist(100)
	}
	for extra, want := range map[string]int64{
		``:                              0,
		`,"orphanMs":null`:              0,
		`,"orphanMs":0`:                 0,
		`,"orphanMs":-1`:                OrphanNever,
		`,"orphanMs": -1 `:              OrphanNever,
		`,"orphanMs":60000`:             60000,
		`,"orphanMs":9223372036853`:     9223372036853,
		`,"orphanMs":60000,"journal":5`: 60000,
	} {
		p, err := persist(extra)
		require.NoError(t, err, extra)
		assert.Equal(t, want, p.OrphanMs, extra)
	}
	for _, bad := range []string{`-2`, `1.5`, `"60000"`, `1e3`, `true`, `9223372036855`, `-1.0`} {
		_, err := persist(`,"orphanMs":` + bad)
		assert.EqualError(t, err, fmt.Sprintf("malformed OPEN: orphanMs must be -1 (never) or a whole number of milliseconds (0: the server's default), not %s", bad))
	}
}

// OPENED says readopted only when it is so; the server's HELLO lists it.
func TestReadoptOnTheWire(t *testing.T) {
	assert.Equal(t, `{"pid":1,"terminalId":"a"}`, string(Marshal(Opened{PID: 1, TerminalID: "a"})))
	assert.Equal(t, `{"pid":1,"readopted":true,"terminalId":"a"}`, string(Marshal(Opened{PID: 1, TerminalID: "a", Readopted: true})))
	assert.True(t, Hello{Features: PersistHelloFeatures}.Has(FeatureReadopt))
	assert.NotContains(t, PersistFeatures, FeatureReadopt, "OPENED's features are the frames a terminal serves")
}

// A bridge's HELLO carries its environment; other HELLOs none, and a
// malformed env is a malformed HELLO.
func TestHelloEnvOnTheWire(t *testing.T) {
	b := string(Marshal(Hello{Version: "v", Protocol: 1, Features: []string{"hello"}, Env: []string{"A=1"}}))
	assert.Contains(t, b, `"env":["A=1"]`)
	assert.NotContains(t, string(Marshal(SidecarHello("v", nil))), `"env"`)
	_, err := ParseHello([]byte(`{"protocol":1,"env":"A=1"}`))
	assert.Error(t, err)
}
