package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"testing"
	"time"
)

// A stderr nobody reads never blocks the goroutine that logs: lines past
// what the sink holds are counted and left out, and once stderr is read
// again the kept lines arrive, in order, with a line saying how many were
// left out; flush waits for them.
func TestLogNeverBlocksOnUnreadStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	sink := newStderrSink(w)
	l := log.New(sink, "", 0)
	line := strings.Repeat("x", 1000)
	logged := make(chan struct{})
	go func() {
		// Far more than the pipe and the sink hold together.
		for i := range 2000 {
			l.Printf("%04d %s", i, line)
		}
		close(logged)
	}()
	select {
	case <-logged:
	case <-time.After(time.Minute):
		t.Fatal("logging blocked on a stderr nobody reads")
	}
	// stderr is read again: flush returns once everything kept is
	// written, and the next line, with room for it now, goes out after
	// the count of those left out.
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	sink.flush()
	l.Printf("last")
	sink.flush()
	w.Close()
	b := <-got
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if !bytes.HasPrefix(lines[0], []byte("0000 ")) {
		t.Errorf("first line %.20q", lines[0])
	}
	if last := string(lines[len(lines)-1]); last != "last" {
		t.Errorf("last line %.40q, want the line logged after the others", last)
	}
	// Every line either arrived, in order, or was counted: where the
	// counts stand depends on when the sink's writes to the full pipe
	// returned (Wine's pipes return some early), not on what was lost.
	kept, counted, next := 0, 0, 0
	for _, l := range lines[:len(lines)-1] {
		var n int
		if _, err := fmt.Sscanf(string(l), "ptyplex-sidecar: %d log lines left out: stderr was not read", &n); err == nil {
			counted += n
			continue
		}
		var i int
		if _, err := fmt.Sscanf(string(l), "%04d ", &i); err != nil || i < next {
			t.Fatalf("line %.30q: neither a logged line in order nor a count", l)
		}
		kept, next = kept+1, i+1
	}
	if counted == 0 {
		t.Errorf("no line says how many were left out (%d lines arrived)", len(lines))
	}
	if kept+counted != 2000 {
		t.Errorf("%d lines arrived and %d were counted as left out, of 2000", kept, counted)
	}
	if n := len(lines); n >= 2000 {
		t.Errorf("%d lines arrived: nothing was left out", n)
	}
}
