package soak

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// TestIntegrity has terminals send random bytes with the tty in raw mode;
// each child hashes exactly what it wrote, and the host's SHA-256 of every
// OUTPUT stream must equal the child's.
func TestIntegrity(t *testing.T) {
	const n = 8
	per := size(4<<20, 64<<20)
	dir := t.TempDir()
	sums := make(map[string]hash.Hash, n)
	got := make(map[string]int, n)
	for i := 0; i < n; i++ {
		sums[fmt.Sprint("r", i)] = sha256.New()
	}
	exits := make(chan proto.Exit, n)
	bad := make(chan string, 16)
	h := startHost(t, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeOutput:
			id, data, err := proto.ParseData(f.Body)
			if err != nil || sums[id] == nil {
				bad <- fmt.Sprintf("OUTPUT %q: %v", id, err)
				return
			}
			sums[id].Write(data)
			got[id] += len(data)
		case proto.TypeExit:
			exits <- parseExit(f.Body)
		case proto.TypeError:
			bad <- string(f.Body)
		}
	})
	start := time.Now()
	for i := 0; i < n; i++ {
		id := fmt.Sprint("r", i)
		// tee sends the bytes to the terminal (fd 3) and on to sha256sum,
		// so the child's hash is of exactly what it wrote.
		h.open(id, "-c", fmt.Sprintf("stty raw -echo; exec 3>&1; head -c %d /dev/urandom | tee /dev/fd/3 | sha256sum > %s",
			per, filepath.Join(dir, id+".sha")))
	}
	for i := 0; i < n; i++ {
		select {
		case e := <-exits:
			require.NotNil(t, e.ExitCode, "EXIT %+v", e)
			require.Equal(t, 0, *e.ExitCode, "EXIT %+v", e)
		case b := <-bad:
			t.Fatal(b)
		case <-time.After(size(2*time.Minute, 10*time.Minute)):
			t.Fatalf("only %d of %d terminals finished", i, n)
		}
	}
	elapsed := time.Since(start)
	for id, s := range sums {
		b, err := os.ReadFile(filepath.Join(dir, id+".sha"))
		require.NoError(t, err)
		child := strings.Fields(string(b))[0]
		require.Equal(t, per, got[id], "bytes of %s", id)
		require.Equal(t, child, hex.EncodeToString(s.Sum(nil)), "SHA-256 of %s", id)
	}
	t.Logf("%d × %d MiB verified in %v (%.0f MB/s)", n, per>>20, elapsed.Round(time.Millisecond), float64(n*per)/elapsed.Seconds()/1e6)
	h.stop(time.Minute)
}

func parseExit(body []byte) proto.Exit {
	var e proto.Exit
	jsonUnmarshal(body, &e)
	return e
}
