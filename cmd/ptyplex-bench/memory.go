//go:build unix

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// idleScript prints a prompt (so each terminal's read path has been used
// once, as a shell's would be) and then waits for input forever.
var idleScript = []string{"-c", "echo ready; exec cat"}

// idleMemory opens n idle terminals in one sidecar and returns its RSS in
// KiB with one terminal open (the baseline) and with n+1 open.
func idleMemory(bin string, n int, settle time.Duration) (base, loaded int, err error) {
	ready := make(chan struct{}, n+1)
	seen := map[string]bool{}
	h, err := startSidecar(bin, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeOutput:
			id, _, _ := proto.ParseData(f.Body)
			if !seen[id] {
				seen[id] = true
				ready <- struct{}{}
			}
		case proto.TypeError:
			fmt.Printf("ERROR %s\n", f.Body)
		}
	})
	if err != nil {
		return 0, 0, err
	}
	defer h.stop()
	wait := func(k int) error {
		for i := 0; i < k; i++ {
			select {
			case <-ready:
			case <-time.After(2 * time.Minute):
				return errors.New("idle terminals never printed their prompt")
			}
		}
		return nil
	}
	if err := h.open("first", "/bin/sh", idleScript...); err != nil {
		return 0, 0, err
	}
	if err := wait(1); err != nil {
		return 0, 0, err
	}
	time.Sleep(settle)
	if base, err = rssKiB(h.pid()); err != nil {
		return 0, 0, err
	}
	for i := 0; i < n; i++ {
		if err := h.open(fmt.Sprint("idle", i), "/bin/sh", idleScript...); err != nil {
			return 0, 0, err
		}
	}
	if err := wait(n); err != nil {
		return 0, 0, err
	}
	time.Sleep(settle)
	loaded, err = rssKiB(h.pid())
	return base, loaded, err
}
