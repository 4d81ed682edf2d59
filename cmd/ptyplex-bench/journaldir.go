//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"regexp"
)

// journalDirRows adds the cost of --journal-dir: throughput through the
// bridge with every journal on disk too (one write(2) per PTY read, an
// fsync a second), against the same bridge without, in the same pair.
// The budget is 0.8.
func journalDirRows(t *table, filter *regexp.Regexp, tmp string) {
	for _, n := range []int{1, 16} {
		name := fmt.Sprintf("persist journal-dir ×%d", n)
		if !filter.MatchString(name) {
			continue
		}
		f, err := makeFlood(tmp, int64(*totalMiB)<<20/int64(n))
		if err != nil {
			fatalf("%v", err)
		}
		// The CPU of the server and the bridge per run: steadier than
		// throughput on a loaded machine, and what the disk costs.
		var cpu series
		s := measure(name, func() (float64, float64, error) {
			b, bcpu, err := persistThroughput(*sidecarBin, tmp, f, n, false, false)
			if err != nil {
				return 0, 0, err
			}
			// A directory of its own per run, made by the server (0700).
			dir := filepath.Join(tmp, fmt.Sprint("journals-", persistSeq.Add(1)))
			v, vcpu, err := persistThroughput(*sidecarBin, tmp, f, n, false, false, "--journal-dir", dir)
			cpu = append(cpu, pair{bcpu, vcpu})
			return b, v, err
		})
		t.add(row{name: fmt.Sprintf("Throughput through --persist with --journal-dir, %d terminal%s, cooked (MB/s; baseline: the same without --journal-dir)", n, plural(n)),
			unit: "%.0f", scale: 1e-6, s: s, higherBetter: true, minRatio: ptr(0.8)})
		t.add(row{name: "CPU of the server and bridge for that run (s; baseline: the same without --journal-dir)",
			unit: "%.2f", scale: 1, s: cpu})
	}
}
