package main

import (
	"os"
	"runtime"
)

// limitProcs runs the sidecar's Go code on one P unless GOMAXPROCS says
// otherwise.
//
// The sidecar's own work per byte is a copy; everything else happens in
// the kernel. With more Ps, every frame a PTY reader hands to the stdout
// writer wakes an idle P on another thread, which then spins and parks
// again: measured with perf on a 2-core VM, 256 MiB through one terminal
// cost 4.25 s of CPU and 232k context switches with GOMAXPROCS=2, 2.38 s
// and 162k with 1. In interleaved runs of make bench (5 pairs) the
// throughput ratio to the raw PTY went from 0.59 to 0.90 for one terminal
// and from 0.82 to 0.89 for 16. The price is latency under a flood: an
// echo waits for the one P behind the flooding readers (see README,
// Performance). Hosts that want otherwise set GOMAXPROCS.
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
