package client

import (
	"context"
	"sync"
	"testing"
)

// Hello from several goroutines at once: all but one failed with "a
// handshake is already waiting for its answer", although every method is
// documented safe for concurrent use. They now take turns.
func TestConcurrentHellosTakeTurns(t *testing.T) {
	c := startClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Hello(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Hello: %v", err)
	}
	if _, ok := c.Peer(); !ok {
		t.Error("no Peer after the handshakes")
	}
}
