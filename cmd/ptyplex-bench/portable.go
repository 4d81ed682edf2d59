package main

import (
	"flag"
	"fmt"
	"regexp"
)

var portableBin = flag.String("portable-sidecar", "", "a ptyplex-sidecar `binary` built with -tags ptyplex_portable: adds rows comparing it to -sidecar (the Linux backend), which is their baseline")

// portableRows compares the portable backend with the Linux one on what
// the backends do differently: spawning and reaping children (the
// open/close rate) and, as a check that the shared PTY path stays shared,
// throughput. Each pair runs the -sidecar binary first, then the portable
// one, so both see the same moment's load.
func portableRows(t *table, filter *regexp.Regexp, tmp string) {
	if *portableBin == "" {
		return
	}
	for _, n := range []int{1, 16} {
		name := fmt.Sprintf("portable throughput ×%d", n)
		if !filter.MatchString(name) {
			continue
		}
		f, err := makeFlood(tmp, int64(*totalMiB)<<20/int64(n))
		if err != nil {
			fatalf("%v", err)
		}
		s := measure(name, func() (float64, float64, error) {
			b, err := sidecarThroughput(*sidecarBin, f, n, true)
			if err != nil {
				return 0, 0, err
			}
			p, err := sidecarThroughput(*portableBin, f, n, true)
			return b, p, err
		})
		t.add(row{name: fmt.Sprintf("Portable backend: throughput, %d terminal%s, raw (MB/s; baseline: Linux backend)", n, plural(n)),
			unit: "%.0f", scale: 1e-6, s: s, higherBetter: true, minRatio: ptr(0.90)})
	}
	if filter.MatchString("portable open/close rate") {
		s := measure("portable open/close rate", func() (float64, float64, error) {
			b, err := cycleRateSidecar(*sidecarBin, 500, 16)
			if err != nil {
				return 0, 0, err
			}
			p, err := cycleRateSidecar(*portableBin, 500, 16)
			return b, p, err
		})
		t.add(row{name: "Portable backend: open/close cycles per second, 16 in flight (baseline: Linux backend)",
			unit: "%.0f", scale: 1, s: s, higherBetter: true, minRatio: ptr(0.90)})
	}
}
