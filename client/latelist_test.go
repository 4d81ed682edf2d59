//go:build linux

package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// LISTED names no request. A List that gave up waiting left its answer to
// come later, and the next List, had that LISTED arrived while it waited,
// took it for its own: it returned the terminals as they were before. The
// late answer is now dropped, and each List gets the answer to its LIST.
func TestLateListedIsNotTheNextListsAnswer(t *testing.T) {
	p := newFakePeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.c.List(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unanswered List: %v", err)
	}
	if f := p.next(t); f.Type != proto.TypeList {
		t.Fatalf("the client wrote %v, want LIST", f.Type)
	}
	type result struct {
		l   []proto.ListedTerminal
		err error
	}
	got := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		l, err := p.c.List(ctx)
		got <- result{l, err}
	}()
	if f := p.next(t); f.Type != proto.TypeList {
		t.Fatalf("the client wrote %v, want LIST", f.Type)
	}
	// The first LIST's answer comes only now, then the second's.
	listed := func(id string) {
		if err := proto.WriteFrame(p.toHost, proto.TypeListed, proto.Marshal(proto.Listed{Terminals: []proto.ListedTerminal{{TerminalID: id}}})); err != nil {
			t.Fatal(err)
		}
	}
	listed("before")
	listed("now")
	r := <-got
	if r.err != nil || len(r.l) != 1 || r.l[0].TerminalID != "now" {
		t.Fatalf("the second List: %+v, %v; want the terminal \"now\" of its own answer", r.l, r.err)
	}
}

// Lists take turns (LISTED names no request), and one waiting its turn
// behind a List that waits long (a sidecar that never answers) waited
// past its own ctx, as long as the other's. It now ends with its ctx.
func TestListWaitingItsTurnEndsWithItsContext(t *testing.T) {
	p := newFakePeer(t)
	long, cancelLong := context.WithTimeout(context.Background(), waitBound)
	defer cancelLong()
	first := make(chan error, 1)
	go func() {
		_, err := p.c.List(long)
		first <- err
	}()
	if f := p.next(t); f.Type != proto.TypeList {
		t.Fatalf("the client wrote %v, want LIST", f.Type)
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.c.List(short)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the second List: %v; want its deadline", err)
	}
	if d := time.Since(start); d > waitBound/2 {
		t.Errorf("the second List took %v, past its 100ms context", d)
	}
	cancelLong()
	<-first
}
