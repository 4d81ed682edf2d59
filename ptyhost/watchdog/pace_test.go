//go:build unix

package watchdog

import (
	"fmt"
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

// sizeRecorder notes the size of every read that returned data.
type sizeRecorder struct {
	r     io.Reader
	sizes []int
}

func (s *sizeRecorder) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if n > 0 {
		s.sizes = append(s.sizes, n)
	}
	return n, err
}

// TestAnnouncementBacklog: a backlog of announcements (a new watchdog
// told of every live terminal, a parent announcing faster than the pace)
// is read a pipe's worth at a time with no pause between full reads; only
// the short read that empties it is followed by one.
func TestAnnouncementBacklog(t *testing.T) {
	var backlog strings.Builder
	backlog.WriteString(tokened("token T\n"))
	lines := 0
	for backlog.Len() < 300<<10 {
		fmt.Fprintf(&backlog, tok+" + %d 123456789 /dev/pts/%d 64 %d 1700000000123456789\n", 100000+lines, lines%4096, lines)
		lines++
	}
	clock := time.Unix(1000, 0)
	var slept []time.Duration
	rec := &sizeRecorder{r: strings.NewReader(backlog.String())}
	var log strings.Builder
	a := readAnnouncements(&pacedReader{
		r:     rec,
		pace:  20 * time.Millisecond,
		now:   func() time.Time { return clock },
		sleep: func(d time.Duration) { slept = append(slept, d); clock = clock.Add(d) },
	}, &log)
	if a.err != nil || a.ignored != 0 || log.Len() > 0 {
		t.Fatalf("reading the backlog: %v, %d ignored, log %q", a.err, a.ignored, log.String())
	}
	if got := len(a.live); got != lines {
		t.Fatalf("read %d announcements, want %d", got, lines)
	}
	// 300 KiB in reads of up to 64 KiB: five, the first four full.
	if len(rec.sizes) > 6 {
		t.Errorf("%d reads for %d bytes (sizes %v): want 64 KiB reads", len(rec.sizes), backlog.Len(), rec.sizes)
	}
	for i, n := range rec.sizes[:len(rec.sizes)-1] {
		if n < 60<<10 {
			t.Errorf("read %d took %d bytes, want about 64 KiB", i, n)
		}
	}
	// One pause: before the read that finds the end, after the short read.
	if len(slept) != 1 {
		t.Errorf("paused %d times (%v), want once, after the short read", len(slept), slept)
	}
}
