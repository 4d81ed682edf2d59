//go:build unix

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
// throughput. Each pair runs both binaries back to back, so both see the
// same moment's load, and the order alternates from pair to pair: on a
// loaded machine the second run of a pair is systematically slower or
// faster (caches, the first one's teardown), which would otherwise bias
// the ratio.
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
		s := measure(name, alternate(func(bin string) (float64, error) { return sidecarThroughput(bin, f, n, true) }))
		t.add(row{name: fmt.Sprintf("Portable backend: throughput, %d terminal%s, raw (MB/s; baseline: Linux backend)", n, plural(n)),
			unit: "%.0f", scale: 1e-6, s: s, higherBetter: true, minRatio: ptr(0.90)})
	}
	if filter.MatchString("portable open/close rate") {
		s := measure("portable open/close rate", alternate(func(bin string) (float64, error) { return cycleRateSidecar(bin, 500, 16) }))
		t.add(row{name: "Portable backend: open/close cycles per second, 16 in flight (baseline: Linux backend)",
			unit: "%.0f", scale: 1, s: s, higherBetter: true, minRatio: ptr(0.90)})
	}
}

// alternate turns one measurement of a sidecar binary into a pair of the
// Linux backend's (baseline) and the portable one's, measuring the
// baseline first in even pairs and second in odd ones.
func alternate(run func(bin string) (float64, error)) func() (float64, float64, error) {
	pair := 0
	return func() (float64, float64, error) {
		swap := pair%2 == 1
		pair++
		first, second := *sidecarBin, *portableBin
		if swap {
			first, second = second, first
		}
		a, err := run(first)
		if err != nil {
			return 0, 0, err
		}
		b, err := run(second)
		if err != nil {
			return 0, 0, err
		}
		if swap {
			return b, a, nil
		}
		return a, b, nil
	}
}
