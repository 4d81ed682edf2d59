//go:build unix

package sidecar

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// TestWriterKeepsFramesInOrder sends frames of every size class (priority
// and bulk lanes, pooled OUTPUT buffers, frames larger than the holder's
// buffer) from several terminals at once, inline and queued, through a
// real pipe and through a plain io.Writer, and checks that the host reads
// every terminal's frames whole and in the order it sent them: a pooled
// buffer reused before its bytes were written, or a frame of one
// terminal overtaking another of the same, shows up as a wrong payload.
func TestWriterKeepsFramesInOrder(t *testing.T) {
	for _, viaPipe := range []bool{true, false} {
		t.Run(map[bool]string{true: "pipe", false: "plain writer"}[viaPipe], func(t *testing.T) {
			r, wf, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var out io.Writer = wf
			if !viaPipe {
				out = struct{ io.Writer }{wf} // hides the *os.File
			}
			broken := make(chan error, 1) // called once at most
			w := newWriter(out, nil, func(err error) { broken <- err })

			const terms, frames = 4, 200
			payload := func(id string, k, n int) []byte {
				b := make([]byte, n)
				for j := range b {
					b[j] = byte(int(id[0]) + k*7 + j)
				}
				return b
			}
			sizes := []int{1, 300, prioMax + 1, 8 << 10, 40 << 10, frameSize - 16, 128<<10 + 3}
			sent := make([][]int, terms) // payload sizes per terminal, in order
			var wg sync.WaitGroup
			for i := 0; i < terms; i++ {
				term := &terminal{id: fmt.Sprint("t", i)}
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				for k := 0; k < frames; k++ {
					sent[i] = append(sent[i], sizes[rng.IntN(len(sizes))])
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k, n := range sent[i] {
						enc := proto.AppendDataFrame(nil, proto.TypeOutput, term.id, payload(term.id, k, n))
						f := outFrame{buf: enc, term: term}
						if len(enc) <= frameSize {
							pb := getFrameBuf(len(enc))
							f.buf, f.pooled = append((*pb)[:0], enc...), pb
						}
						w.send(f, k%3 != 0)
					}
				}()
			}
			done := make(chan error, 1)
			seen := make([]int, terms)
			go func() {
				rd := proto.NewReader(r)
				for {
					fr, err := rd.ReadFrame()
					if err == io.EOF {
						done <- nil
						return
					}
					if err != nil {
						done <- err
						return
					}
					id, data, err := proto.ParseData(fr.Body)
					if err != nil {
						done <- err
						return
					}
					var i int
					fmt.Sscanf(id, "t%d", &i)
					k := seen[i]
					if k >= frames || !bytes.Equal(data, payload(id, k, sent[i][k])) {
						done <- fmt.Errorf("%s: frame %d of %d bytes is not the one sent", id, k, len(data))
						return
					}
					seen[i]++
				}
			}()
			// Bounded: a corrupt stream may leave the reader waiting for
			// the rest of a frame whose length is garbage.
			closed := make(chan struct{})
			go func() {
				wg.Wait()
				w.close()
				wf.Close()
				close(closed)
			}()
			timeout := time.After(time.Minute)
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-timeout:
				t.Fatal("the host read no end of the stream within a minute")
			}
			select {
			case <-closed:
			case <-timeout:
				t.Fatal("the senders and the writer did not finish within a minute")
			}
			select {
			case err := <-broken:
				t.Fatalf("write failed: %v", err)
			default:
			}
			for i, n := range seen {
				if n != frames {
					t.Errorf("t%d: %d frames arrived, want %d", i, n, frames)
				}
			}
		})
	}
}
