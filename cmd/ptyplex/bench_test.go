//go:build unix

package main

import (
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart measures `ptyplex start` from exec to its return, which
// happens once the daemon's socket accepts connections. Stopping is not
// timed.
func BenchmarkStart(b *testing.B) {
	samples := make([]time.Duration, 0, 64)
	for b.Loop() {
		t0 := time.Now()
		out := ok(b, "start", "--", "cat")
		samples = append(samples, time.Since(t0))
		b.StopTimer()
		var sock string
		var pid int
		for _, l := range strings.Split(out, "\n") {
			if v, found := strings.CutPrefix(l, "Socket: "); found {
				sock = v
			}
			if v, found := strings.CutPrefix(l, "PID: "); found {
				pid, _ = strconv.Atoi(v)
			}
		}
		ok(b, "stop", "--socket", sock)
		if !waitGone(pid, deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		b.StartTimer()
	}
	reportPercentiles(b, samples)
}

// BenchmarkCLIOutput is `ptyplex output` as a script runs it: process
// start, connect, OUTPUT, print.
func BenchmarkCLIOutput(b *testing.B) {
	s := start(b, "--", "sh", "-c", "seq 1 30; exec cat")
	s.waitText("30")
	for b.Loop() {
		s.ok("output")
	}
}

func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(p float64) float64 { return float64(samples[int(p*float64(len(samples)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
