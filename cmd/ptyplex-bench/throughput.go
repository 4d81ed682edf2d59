//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// flood is the input of a throughput run: a text file that each terminal's
// child cats to its PTY.
type flood struct {
	path  string
	size  int64 // bytes in the file
	lines int64 // newlines in it (each becomes \r\n in cooked mode)
}

func makeFlood(dir string, size int64) (flood, error) {
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVW\n")
	var b bytes.Buffer
	b.Grow(int(size))
	for int64(b.Len()) < size {
		b.Write(line[:min(len(line), int(size)-b.Len())])
	}
	p := filepath.Join(dir, fmt.Sprintf("flood-%d.txt", size))
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		return flood{}, err
	}
	return flood{path: p, size: size, lines: int64(bytes.Count(b.Bytes(), []byte{'\n'}))}, nil
}

// script is the child's command line: raw mode turns off the line
// discipline's output processing (what a full-screen program does),
// cooked keeps the default termios (OPOST|ONLCR: \n goes out as \r\n).
func (f flood) script(raw bool) []string {
	if raw {
		return []string{"-c", "stty raw -echo; exec cat " + f.path}
	}
	return []string{"-c", "exec cat " + f.path}
}

func (f flood) want(raw bool) int64 {
	if raw {
		return f.size
	}
	return f.size + f.lines
}

// directThroughput runs n children at once, reads every PTY in this
// process and returns the aggregate bytes per second.
func directThroughput(f flood, n int, raw bool) (float64, error) {
	return inProcessThroughput("direct", f, n, raw, func() (func() (int64, error), error) {
		p, err := startDirect("/bin/sh", f.script(raw)...)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) { return drainDirect(p, nil) }, nil
	})
}

// inProcessThroughput starts n children with start, each returning the
// drain that reads its PTY to the end, runs the drains at once, checks
// every count and returns the aggregate bytes per second.
func inProcessThroughput(what string, f flood, n int, raw bool, start func() (drain func() (int64, error), err error)) (float64, error) {
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		drain, err := start()
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := drain()
			if err == nil && got != f.want(raw) {
				err = fmt.Errorf("%s: read %d bytes, want %d", what, got, f.want(raw))
			}
			errs <- err
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return float64(int64(n)*f.want(raw)) / elapsed.Seconds(), nil
}

// sidecarThroughput runs the same n children through one sidecar and
// returns the aggregate bytes per second of OUTPUT payload received.
func sidecarThroughput(bin string, f flood, n int, raw bool) (float64, error) {
	v, _, err := sidecarThroughputCPU(bin, f, n, raw)
	return v, err
}

// sidecarThroughputCPU is sidecarThroughput that also returns the CPU
// seconds the sidecar process used (0 where that cannot be read).
func sidecarThroughputCPU(bin string, f flood, n int, raw bool) (float64, float64, error) {
	got := make(map[string]int64, n)
	exits := 0
	var ferr error
	all := make(chan struct{})
	h, err := startSidecar(bin, func(fr proto.Frame) {
		switch fr.Type {
		case proto.TypeOutput:
			id, data, err := proto.ParseData(fr.Body)
			if err != nil {
				ferr = err
			}
			got[id] += int64(len(data))
		case proto.TypeExit:
			if err := exitOK(fr.Body); err != nil && ferr == nil {
				ferr = err
			}
			if exits++; exits == n {
				close(all)
			}
		case proto.TypeError:
			ferr = fmt.Errorf("ERROR %s", fr.Body)
		}
	})
	if err != nil {
		return 0, 0, err
	}
	if err := h.ready(); err != nil {
		return 0, 0, err
	}
	cpu0, _ := cpuSeconds(h.pid()) // the sidecar's start, not the flood's
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := h.open(fmt.Sprint("t", i), "/bin/sh", f.script(raw)...); err != nil {
			return 0, 0, err
		}
	}
	select {
	case <-all:
	case <-h.readEnded():
		return 0, 0, fmt.Errorf("sidecar output ended early: %v", h.readErr())
	case <-time.After(10 * time.Minute):
		return 0, 0, fmt.Errorf("timed out after %d of %d EXITs", exits, n)
	}
	elapsed := time.Since(start)
	// Every EXIT is in: the sidecar's work is done, it is not reaped yet.
	cpu, _ := cpuSeconds(h.pid())
	cpu -= cpu0
	if err := h.stop(); err != nil {
		return 0, 0, err
	}
	if ferr != nil {
		return 0, 0, ferr
	}
	for id, b := range got {
		if b != f.want(raw) {
			return 0, 0, fmt.Errorf("sidecar: %s received %d bytes, want %d", id, b, f.want(raw))
		}
	}
	return float64(int64(n)*f.want(raw)) / elapsed.Seconds(), cpu, nil
}
