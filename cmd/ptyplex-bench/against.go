//go:build unix

package main

import (
	"flag"
	"fmt"
	"regexp"
)

// againstBin is an older ptyplex-sidecar to hold the plain sidecar's own
// rows against: a change to the engine must leave them no worse, and
// only a run that takes both binaries in turn, pair by pair, shares one
// moment's load between them on these noisy machines.
var againstBin = flag.String("against", "", "an older ptyplex-sidecar `binary`: adds rows of the plain sidecar's throughput and echo with it as the baseline (same run, pairs interleaved)")

// againstRows adds the plain sidecar's throughput rows (1 and 16
// terminals, raw and cooked) and its echo rows with -against's binary as
// the baseline. Their names start with "against", for -only.
func againstRows(t *table, filter *regexp.Regexp, tmp string) {
	if *againstBin == "" {
		return
	}
	for _, n := range []int{1, 16} {
		for _, raw := range []bool{true, false} {
			mode := map[bool]string{true: "raw", false: "cooked"}[raw]
			name := fmt.Sprintf("against throughput %s ×%d", mode, n)
			if !filter.MatchString(name) {
				continue
			}
			f, err := makeFlood(tmp, int64(*totalMiB)<<20/int64(n))
			if err != nil {
				fatalf("%v", err)
			}
			s := measure(name, func() (float64, float64, error) {
				b, err := sidecarThroughput(*againstBin, f, n, raw)
				if err != nil {
					return 0, 0, fmt.Errorf("the older sidecar: %w", err)
				}
				s, err := sidecarThroughput(*sidecarBin, f, n, raw)
				return b, s, err
			})
			t.add(row{name: fmt.Sprintf("Throughput, %d terminal%s, %s (MB/s; baseline: the older sidecar)", n, plural(n), mode),
				unit: "%.0f", scale: 1e-6, s: s, higherBetter: true, minRatio: ptr(0.95)})
		}
	}
	if name := "against echo"; filter.MatchString(name) {
		var p50, p99 series
		measure(name, func() (float64, float64, error) {
			b, err := echoSidecar(*againstBin, 1000, 0)
			if err != nil {
				return 0, 0, fmt.Errorf("the older sidecar: %w", err)
			}
			s, err := echoSidecar(*sidecarBin, 1000, 0)
			if err != nil {
				return 0, 0, err
			}
			p50 = append(p50, pair{ms(percentile(b, 50)), ms(percentile(s, 50))})
			p99 = append(p99, pair{ms(percentile(b, 99)), ms(percentile(s, 99))})
			return 0, 0, nil
		})
		t.add(row{name: "Echo round trip p50, idle (ms; baseline: the older sidecar)", unit: "%.3f", scale: 1, s: p50, maxRatio: ptr(1.1)})
		t.add(row{name: "Echo round trip p99, idle (ms; baseline: the older sidecar)", unit: "%.3f", scale: 1, s: p99})
	}
}
