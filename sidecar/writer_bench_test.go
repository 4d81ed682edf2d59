//go:build unix

package sidecar

import (
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/proto"
)

// BenchmarkWriterFlood is one flooding terminal's frames (full OUTPUT
// frames, sent inline as its reader does) through the writer into a pipe
// that another goroutine drains: the writer's own cost per byte.
func BenchmarkWriterFlood(b *testing.B) {
	r, wf, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(drained)
	}()
	w := newWriter(wf, nil, func(err error) { b.Errorf("write failed: %v", err) })
	term := &terminal{id: "t0"}
	b.SetBytes(frameSize)
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pb := getFrameBuf(frameSize)
		buf := (*pb)[:frameSize]
		proto.PutDataHeader(buf, proto.TypeOutput, term.id)
		w.send(outFrame{buf: buf, pooled: pb, term: term}, true)
	}
	w.close()
	wf.Close()
	<-drained
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	r.Close()
}

// processCPU is the user and system time this process used, in ns: the
// writer's and the draining goroutine's (the same in every variant).
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
