//go:build unix

package sidecar_test

import (
	"fmt"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// A host may reuse an id the moment it has read that id's EXIT. The id must
// be free by then, not only once the sidecar's writer got round to it.
func TestIDFreeWhenExitArrives(t *testing.T) {
	h := start(t)
	const rounds = 100
	for i := 1; i <= rounds; i++ {
		h.Open(proto.Open{TerminalID: "reuse", Cols: 80, Rows: 24, Cmd: "true"})
		h.MustUntil(fmt.Sprintf("EXIT number %d", i), func(s hosttest.Snapshot) bool {
			n := 0
			for _, c := range s.Controls("reuse") {
				require.NotEqual(t, proto.TypeError, c.Type, "round %d: %s", i, c.Raw)
				if c.Type == proto.TypeExit {
					n++
				}
			}
			return n == i
		})
	}
}
