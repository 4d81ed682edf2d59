package main

import (
	"testing"

	"github.com/ptyplex/ptyplex/mcpserver"
)

// The MCP input tool must type exactly what `ptyplex input --text` types;
// mcpserver keeps its own copy of the unescape rules (this package cannot
// be imported), so check they agree on the spec's examples and edge cases.
func TestMCPUnescapeAgreesWithInputText(t *testing.T) {
	for _, in := range []string{
		`a\nb`, `\r\t\b\a\v\f`, `\e\E`, `\\`, `\\n`, `\x41\x4a\x7F`, `\x4`, `\x`, `\xZZ`,
		`\z`, `trailing\`, `ihello\e:wq\r`, `plain`, `ünï\x63ode\n`, `\x1b[A`, ``,
	} {
		if got, want := string(mcpserver.Unescape(in)), string(unescape(in)); got != want {
			t.Errorf("%q: mcp %q, input --text %q", in, got, want)
		}
	}
}
