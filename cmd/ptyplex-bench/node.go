//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// nodeHostMiB is what the child cats per run in the Node host rows: the
// size the Node budgets are set at.
const nodeHostMiB = 32

// nodeRows measures one terminal through Node hosts against node-pty, the
// baseline every Node host would otherwise use: node/bench/naive-host.js
// runs, in one process and alternating, a host with a naive frame decoder
// (concatenate carry and chunk, copy each body out, copy the remainder)
// talking to the sidecar directly, the npm package, and node-pty. Without
// node, or without node-pty in node/bench (`make bench-node` builds it),
// the rows are skipped with a notice.
func nodeRows(t *table, filter *regexp.Regexp) {
	if !filter.MatchString("node host") {
		return
	}
	root, _ := os.Getwd()
	dir := filepath.Join(root, "node", "bench")
	skip := func(why string) { fmt.Fprintf(os.Stderr, "node host rows skipped: %s\n", why) }
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		skip("no node on PATH")
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "node-pty", "package.json")); err != nil {
		skip("node-pty is not installed in node/bench (run `make bench-node` once)")
		return
	}
	bin, err := filepath.Abs(*sidecarBin)
	if err != nil {
		fatalf("%v", err)
	}
	results, err := runNaiveHost(nodeBin, dir, bin)
	if err != nil {
		fatalf("node host: %v", err)
	}
	var naive, pkg series
	for _, r := range results {
		naive = append(naive, pair{r["node-pty"], r["naive"]})
		pkg = append(pkg, pair{r["node-pty"], r["package"]})
	}
	t.add(row{name: fmt.Sprintf("Node host, naive decoder: 1 terminal, %d MiB, raw (MB/s; baseline: node-pty)", nodeHostMiB),
		unit: "%.0f", scale: 1, s: naive, higherBetter: true, minRatio: ptr(1.4)})
	t.add(row{name: fmt.Sprintf("Node host, npm package: 1 terminal, %d MiB, raw (MB/s; baseline: node-pty)", nodeHostMiB),
		unit: "%.0f", scale: 1, s: pkg, higherBetter: true, minRatio: ptr(1.2)})
}

// runNaiveHost runs naive-host.js for -runs alternating runs and returns
// each run's MB/s by host.
func runNaiveHost(nodeBin, dir, sidecar string) ([]map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*runs)*2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "naive-host.js", "--json", "--runs", fmt.Sprint(*runs),
		"--mib", fmt.Sprint(nodeHostMiB), "--impls", "naive,package,node-pty", "--sidecars", sidecar)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PTYPLEX_SIDECAR_PATH="+sidecar)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s naive-host.js: %w", nodeBin, err)
	}
	// Each run also reports CPU and lost output per host (objects and
	// flags): only the plain MB/s numbers are kept.
	var res struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("naive-host.js output: %w", err)
	}
	var all []map[string]float64
	for i, r := range res.Runs {
		m := map[string]float64{}
		for _, k := range []string{"naive", "package", "node-pty"} {
			var v float64
			if err := json.Unmarshal(r[k], &v); err != nil || v <= 0 {
				return nil, fmt.Errorf("naive-host.js run %d: no figure for %s", i+1, k)
			}
			m[k] = v
		}
		all = append(all, m)
	}
	return all, nil
}
