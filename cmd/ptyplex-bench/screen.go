//go:build unix

package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/ptyplex/ptyplex/screen"
)

// recordedStreams concatenates the recorded terminal sessions under
// testdata/screen (vim, less, top, bash, ...), each followed by a reset so
// every replay starts from a clean screen, repeated to at least 4 MiB.
func recordedStreams(root string) ([]byte, error) {
	names, err := filepath.Glob(filepath.Join(root, "testdata", "screen", "*.bin"))
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var one []byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		one = append(one, b...)
		one = append(one, "\x1b[?1049l\x1bc"...)
	}
	var all []byte
	for len(all) < 4<<20 {
		all = append(all, one...)
	}
	return all, nil
}

// screenThroughput feeds data to an 80x24 screen in 64 KiB writes, as the
// session daemon's PTY reader does, and returns bytes per second.
func screenThroughput(data []byte) float64 {
	s := screen.New(80, 24, screen.Options{Scrollback: 1000})
	start := time.Now()
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 64<<10)
		s.Write(rest[:n])
		rest = rest[n:]
		s.TakeReplies()
	}
	return float64(len(data)) / time.Since(start).Seconds()
}
