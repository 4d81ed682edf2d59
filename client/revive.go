package client

import (
	"context"
	"fmt"

	"github.com/ptyplex/ptyplex/proto"
)

// Revive starts the program of a dead terminal again: one that a
// persistent server which died left in its --journal-dir (List reports it
// with Dead set; see docs/persist.md). The server starts the same
// command, args, cwd and env in a new terminal under the same id, held by
// this connection; its output begins with the old terminal's screen,
// then the new program's. A refusal (no dead terminal of that id, the
// program cannot be started) is an *OpenError with the server's message.
// A ctx without deadline gets DefaultOpenTimeout. A ctx that has ended
// already sends nothing (the dead terminal stays as it is); one that ends
// while Revive waits for the answer leaves a terminal revived after all
// running unheld (List shows it, Attach takes it), since it is the old
// session's program: it is detached, not closed as an abandoned Open is.
func (c *Client) Revive(ctx context.Context, id string) (*Terminal, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("revive terminal %q: %w", id, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultOpenTimeout)
		defer cancel()
	}
	// The server answers as it answers OPEN: OPENED, or an ERROR about
	// the id, which settles the pending open either way.
	p, s, err := c.register("revive terminal", OpenOptions{ID: id, Window: DefaultWindow})
	if err != nil {
		return nil, err
	}
	credit := uint64(DefaultWindow)
	body := proto.Marshal(proto.Revive{TerminalID: id, Credit: &credit})
	forget := func() {
		c.mu.Lock()
		if c.pending[id] == p {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	p.detach = true
	if err := s.SendContext(ctx, proto.AppendFrame(nil, proto.TypeRevive, body)); err != nil {
		forget()
		return nil, fmt.Errorf("revive terminal %q: %w", id, c.dropping(s, err))
	}
	select {
	case err := <-p.result:
		if err != nil {
			return nil, err
		}
		return p.t, nil
	case <-ctx.Done():
	}
	c.mu.Lock()
	if c.pending[id] == p {
		p.abandoned = true
		c.mu.Unlock()
		return nil, fmt.Errorf("revive terminal %q: no answer from the sidecar: %w", id, ctx.Err())
	}
	c.mu.Unlock()
	if err := <-p.result; err != nil {
		return nil, err
	}
	return p.t, nil
}
