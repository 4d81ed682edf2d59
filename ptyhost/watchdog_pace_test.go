package ptyhost

import (
	"io"
	"strings"
	"testing"
	"time"
)

// chunkReader returns one chunk per Read, then EOF.
type chunkReader struct{ chunks []string }

func (c *chunkReader) Read(b []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, c.chunks[0])
	c.chunks = c.chunks[1:]
	return n, nil
}

// TestPacedReader: the first read goes at once; each read after one that
// brought data waits out the rest of the pace; nothing is lost.
func TestPacedReader(t *testing.T) {
	clock := time.Unix(1000, 0)
	var slept []time.Duration
	p := &pacedReader{
		r:     &chunkReader{chunks: []string{"a\n", "b\n", "c\n"}},
		pace:  20 * time.Millisecond,
		now:   func() time.Time { return clock },
		sleep: func(d time.Duration) { slept = append(slept, d); clock = clock.Add(d) },
	}
	var got strings.Builder
	buf := make([]byte, 16)
	for i := 0; ; i++ {
		if i == 2 {
			clock = clock.Add(5 * time.Millisecond) // the caller took 5 ms over a line
		}
		n, err := p.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != "a\nb\nc\n" {
		t.Errorf("read %q", got.String())
	}
	// Before b, c and the EOF: a full pace, 15 ms (5 were spent), a full pace.
	want := []time.Duration{20 * time.Millisecond, 15 * time.Millisecond, 20 * time.Millisecond}
	if len(slept) != len(want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
	for i := range want {
		if slept[i] != want[i] {
			t.Errorf("sleep %d: %v, want %v", i, slept[i], want[i])
		}
	}
	// After a read that brought nothing, the next one goes at once.
	p.r = &chunkReader{chunks: []string{"d\n"}}
	slept = nil
	if n, _ := p.Read(buf); n != 2 || len(slept) != 0 {
		t.Errorf("after an empty read: read %d bytes after sleeping %v", n, slept)
	}
}
