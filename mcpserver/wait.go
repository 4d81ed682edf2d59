//go:build unix

package mcpserver

import (
	"context"

	"github.com/ptyplex/ptyplex/internal/session/waitcond"
)

// runWait performs a wait with the engine the CLI uses too (one matching
// semantics, internal/session/waitcond) and words its errors for an agent.
func runWait(ctx context.Context, socket string, w waitcond.Spec) (waitcond.Outcome, error) {
	o, err := waitcond.Run(ctx, socket, w)
	if err != nil {
		if _, off := err.(waitcond.OffScreenError); off {
			return o, err
		}
		return o, describe(socket, err)
	}
	return o, nil
}
