//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// openLatencyDirect times ptyhost.Start of /bin/true in this process: the
// PTY allocation and spawn the sidecar does for an OPEN.
func openLatencyDirect(samples int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		t0 := time.Now()
		p, err := startDirect("/bin/true")
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
		if _, err := drainDirect(p, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openLatencySidecar times OPEN → OPENED for /bin/true, one at a time.
func openLatencySidecar(bin string, samples int) ([]time.Duration, error) {
	opened := make(chan time.Time, 1)
	exited := make(chan struct{}, 1)
	h, err := startSidecar(bin, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeOpened:
			opened <- time.Now()
		case proto.TypeExit:
			exited <- struct{}{}
		case proto.TypeError:
			fmt.Printf("ERROR %s\n", f.Body)
		}
	})
	if err != nil {
		return nil, err
	}
	defer h.stop()
	out := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		t0 := time.Now()
		if err := h.open(fmt.Sprint("o", i), "/bin/true"); err != nil {
			return nil, err
		}
		select {
		case t := <-opened:
			out = append(out, t.Sub(t0))
		case <-time.After(time.Minute):
			return nil, errors.New("no OPENED")
		}
		<-exited
	}
	return out, nil
}

// The child of an open/close cycle: a shell that says it is ready, then
// waits for input. Each cycle hangs it up only once its first output has
// arrived, so that every child has done the same work when it dies, on
// both sides. (With a bare cat hung up as soon as it was spawned, the
// direct loop's children died inside the dynamic loader while the
// sidecar's, hung up a round trip later, had got further: cat's own CPU
// per cycle measured twice as much on the sidecar's side, and the
// baseline was cheaper for a reason that was not the host's.)
var cycleChild = []string{"/bin/sh", "-c", "echo ready; read line"}

// cycleRateDirect opens and closes terminals running cycleChild, keeping
// inflight of them in flight, and returns completed cycles per second.
// A cycle is spawn, the first output, SIGHUP, read to EOF, reap.
func cycleRateDirect(cycles, inflight int) (float64, error) {
	start := time.Now()
	sem := make(chan struct{}, inflight)
	errs := make(chan error, cycles)
	for i := 0; i < cycles; i++ {
		sem <- struct{}{}
		p, err := startDirect(cycleChild[0], cycleChild[1:]...)
		if err != nil {
			return 0, err
		}
		go func() {
			defer func() { <-sem }()
			hungUp := false
			_, err := drainDirect(p, func([]byte) {
				if !hungUp {
					hungUp = true
					p.SignalGroup(syscall.SIGHUP)
				}
			})
			if err == io.EOF {
				err = nil
			}
			errs <- err
		}()
	}
	for i := 0; i < cycles; i++ {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	return float64(cycles) / time.Since(start).Seconds(), nil
}

// cycleRateSidecar does the same cycles as OPEN, CLOSE on the first
// OUTPUT, EXIT.
func cycleRateSidecar(bin string, cycles, inflight int) (float64, error) {
	events := make(chan proto.Frame, 64)
	h, err := startSidecar(bin, func(f proto.Frame) {
		if f.Type == proto.TypeOutput || f.Type == proto.TypeExit || f.Type == proto.TypeError {
			events <- proto.Frame{Type: f.Type, Body: append([]byte(nil), f.Body...)}
		}
	})
	if err != nil {
		return 0, err
	}
	defer h.stop()
	start := time.Now()
	next, done := 0, 0
	live := map[string]bool{} // id → CLOSE sent
	for done < cycles {
		for len(live) < inflight && next < cycles {
			id := fmt.Sprint("c", next)
			if err := h.open(id, cycleChild[0], cycleChild[1:]...); err != nil {
				return 0, err
			}
			live[id] = false
			next++
		}
		select {
		case f := <-events:
			switch f.Type {
			case proto.TypeOutput:
				id, _, err := proto.ParseData(f.Body)
				if err != nil {
					return 0, err
				}
				if closed, ok := live[id]; ok && !closed {
					live[id] = true
					if err := h.close(id); err != nil {
						return 0, err
					}
				}
			case proto.TypeExit:
				delete(live, idOf(f.Body))
				done++
			case proto.TypeError:
				return 0, fmt.Errorf("ERROR %s", f.Body)
			}
		case <-time.After(time.Minute):
			return 0, fmt.Errorf("stuck after %d of %d cycles", done, cycles)
		}
	}
	return float64(cycles) / time.Since(start).Seconds(), nil
}
