//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// The echo child puts its tty in raw mode and copies input back, so one
// keystroke travels host → PTY → child → PTY → host, like a shell or an
// editor echoing what is typed.
var echoScript = []string{"-c", "stty raw -echo; echo ready; exec cat"}

// floodScript is an endless, unthrottled output flood.
var floodScript = []string{"-c", "stty raw -echo; exec cat /dev/zero"}

// echoDirect measures keystroke round trips on a PTY driven directly, with
// floods other terminals flooding output into this same process.
func echoDirect(samples, floods int) ([]time.Duration, error) {
	var bg []*ptyhost.Process
	defer func() {
		for _, p := range bg {
			p.SignalGroup(syscall.SIGKILL)
		}
	}()
	drained := make(chan error, floods)
	for i := 0; i < floods; i++ {
		p, err := startDirect("/bin/sh", floodScript...)
		if err != nil {
			return nil, err
		}
		bg = append(bg, p)
		go func() { _, err := drainDirect(p, nil); drained <- err }()
	}
	p, err := startDirect("/bin/sh", echoScript...)
	if err != nil {
		return nil, err
	}
	defer func() { p.SignalGroup(syscall.SIGKILL); p.Reap(); p.Close() }()
	buf := make([]byte, 64<<10)
	var seen []byte
	for !bytes.Contains(seen, []byte("ready")) {
		n, err := p.Read(buf)
		if err != nil {
			return nil, err
		}
		seen = append(seen, buf[:n]...)
	}
	rtts := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		key := []byte{'a' + byte(i%26)}
		t0 := time.Now()
		if _, err := p.Write(key); err != nil {
			return nil, err
		}
		for {
			n, err := p.Read(buf)
			if err != nil {
				return nil, err
			}
			if n > 0 && buf[n-1] == key[0] {
				break
			}
		}
		rtts = append(rtts, time.Since(t0))
	}
	for _, q := range bg {
		q.SignalGroup(syscall.SIGKILL)
	}
	for i := 0; i < floods; i++ {
		<-drained // SIGKILL deaths are fine; we only wait for the readers
	}
	bg = nil
	return rtts, nil
}

// echoSidecar measures the same round trip as INPUT → OUTPUT through one
// sidecar that also hosts floods flooding terminals.
func echoSidecar(bin string, samples, floods int) ([]time.Duration, error) {
	echoed := make(chan byte, 16)
	ready := make(chan struct{})
	exits := make(chan struct{}, floods+1)
	var sawReady bool
	var acc []byte
	h, err := startSidecar(bin, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeOutput:
			id, data, _ := proto.ParseData(f.Body)
			if id != "echo" || len(data) == 0 {
				return
			}
			if !sawReady {
				acc = append(acc, data...)
				if bytes.Contains(acc, []byte("ready")) {
					sawReady = true
					close(ready)
				}
				return
			}
			echoed <- data[len(data)-1]
		case proto.TypeExit:
			exits <- struct{}{}
		case proto.TypeError:
			fmt.Printf("ERROR %s\n", f.Body)
		}
	})
	if err != nil {
		return nil, err
	}
	defer h.stop()
	for i := 0; i < floods; i++ {
		if err := h.open(fmt.Sprint("flood", i), "/bin/sh", floodScript...); err != nil {
			return nil, err
		}
	}
	if err := h.open("echo", "/bin/sh", echoScript...); err != nil {
		return nil, err
	}
	select {
	case <-ready:
	case <-time.After(time.Minute):
		return nil, errors.New("echo terminal never became ready")
	}
	rtts := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		key := 'a' + byte(i%26)
		t0 := time.Now()
		if err := h.input("echo", []byte{key}); err != nil {
			return nil, err
		}
		for got := byte(0); got != key; {
			select {
			case got = <-echoed:
			case <-time.After(time.Minute):
				return nil, errors.New("echo lost")
			}
		}
		rtts = append(rtts, time.Since(t0))
	}
	return rtts, nil
}
