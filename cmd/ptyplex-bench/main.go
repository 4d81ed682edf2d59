//go:build unix

// Command ptyplex-bench measures ptyplex against same-run baselines and
// prints one Markdown table: throughput through the sidecar against a host
// reading the PTYs directly, keystroke echo round trips idle and under a
// flood, OPEN latency and open/close rate, memory per idle terminal and the
// screen engine's speed.
//
// The machines this runs on are noisy, so every figure is paired with a
// baseline measured right before it (A/B/A/B...), each row shows medians
// over -runs runs with their min–max, and the ratio of each pair is what
// the budgets judge. Run it through `make bench`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

var (
	sidecarBin = flag.String("sidecar", "bin/ptyplex-sidecar", "the ptyplex-sidecar `binary` to measure")
	runs       = flag.Int("runs", 5, "interleaved baseline/subject `pairs` per measurement")
	totalMiB   = flag.Int("mib", 64, "`MiB` of 80-column text pushed per throughput run, split over the terminals")
	idleN      = flag.Int("idle", 1000, "idle terminals for the memory measurement")
	only       = flag.String("only", "", "run only measurements whose name matches this `regexp`")
	svgPath    = flag.String("svg", "", "also write a ratio chart to this SVG `file`")
	subject    = flag.String("subject", "sidecar", "what the throughput rows measure against plain reads: sidecar, or ptyhost (this process reading through ptyhost, to see the engine's own cost)")
	sidecarEnv = flag.String("sidecar-env", "", "extra `NAME=VALUE ...` (space-separated) in the environment of every sidecar started, e.g. GOMAXPROCS=1")
	quick      = flag.Bool("quick", false, "smaller defaults (3 pairs, 16 MiB, 200 idle terminals): a smoke test, not a measurement")
)

func main() {
	flag.Parse()
	if *quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]*int{"runs": runs, "mib": totalMiB, "idle": idleN} {
			if !set[name] {
				*v = map[string]int{"runs": 3, "mib": 16, "idle": 200}[name]
			}
		}
	}
	if _, err := os.Stat(*sidecarBin); err != nil {
		fatalf("%v (run `make build` first or pass -sidecar)", err)
	}
	filter := regexp.MustCompile(*only)
	tmp, err := os.MkdirTemp("", "ptyplex-bench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)

	var t table
	load1 := loadAvg()
	for _, n := range []int{1, 4, 16, 64} {
		for _, raw := range []bool{true, false} {
			mode := map[bool]string{true: "raw", false: "cooked"}[raw]
			name := fmt.Sprintf("throughput %s ×%d", mode, n)
			if !filter.MatchString(name) {
				continue
			}
			per := int64(*totalMiB) << 20 / int64(n)
			f, err := makeFlood(tmp, per)
			if err != nil {
				fatalf("%v", err)
			}
			s := measure(name, func() (float64, float64, error) {
				b, err := plainThroughput(f, n, raw)
				if err != nil {
					return 0, 0, err
				}
				if *subject == "ptyhost" {
					s, err := directThroughput(f, n, raw)
					return b, s, err
				}
				s, err := sidecarThroughput(*sidecarBin, f, n, raw)
				return b, s, err
			})
			// The throughput budgets, against plain reads, with the
			// default settings.
			var budget *float64
			switch n {
			case 1:
				budget = ptr(0.95)
			case 16:
				budget = ptr(0.90)
			case 64:
				budget = ptr(0.85)
			}
			t.add(row{name: fmt.Sprintf("Throughput, %d terminal%s, %s (MB/s; baseline: plain read(2))", n, plural(n), mode), unit: "%.0f", scale: 1e-6,
				s: s, higherBetter: true, minRatio: budget})
		}
	}
	for _, floods := range []int{0, 64} {
		name := fmt.Sprintf("echo flood=%d", floods)
		if !filter.MatchString(name) {
			continue
		}
		samples := 1000
		if floods > 0 {
			samples = 300
		}
		var p50, p99 series
		measure(name, func() (float64, float64, error) {
			b, err := echoDirect(samples, floods)
			if err != nil {
				return 0, 0, err
			}
			s, err := echoSidecar(*sidecarBin, samples, floods)
			if err != nil {
				return 0, 0, err
			}
			p50 = append(p50, pair{ms(percentile(b, 50)), ms(percentile(s, 50))})
			p99 = append(p99, pair{ms(percentile(b, 99)), ms(percentile(s, 99))})
			return 0, 0, nil
		})
		// Idle: an absolute budget. Beside floods the children saturate
		// every core, which sets the directly driven PTY's own p99 far
		// above any absolute figure: the budget is relative.
		if floods == 0 {
			t.add(row{name: "Echo round trip p50, idle (ms)", unit: "%.3f", scale: 1, s: p50})
			t.add(row{name: "Echo round trip p99, idle (ms)", unit: "%.3f", scale: 1, s: p99, maxValue: ptr(1.0)})
		} else {
			what := fmt.Sprintf("while %d terminals flood", floods)
			t.add(row{name: "Echo round trip p50, " + what + " (ms)", unit: "%.3f", scale: 1, s: p50})
			t.add(row{name: "Echo round trip p99, " + what + " (ms)", unit: "%.3f", scale: 1, s: p99, maxRatio: ptr(1.5)})
		}
	}
	if filter.MatchString("open latency") {
		var p50, p99 series
		measure("open latency", func() (float64, float64, error) {
			b, err := openLatencyDirect(200)
			if err != nil {
				return 0, 0, err
			}
			s, err := openLatencySidecar(*sidecarBin, 200)
			if err != nil {
				return 0, 0, err
			}
			p50 = append(p50, pair{ms(percentile(b, 50)), ms(percentile(s, 50))})
			p99 = append(p99, pair{ms(percentile(b, 99)), ms(percentile(s, 99))})
			return 0, 0, nil
		})
		t.add(row{name: "OPEN→OPENED p50 (ms; baseline: ptyhost.Start)", unit: "%.2f", scale: 1, s: p50, maxRatio: ptr(1.3)})
		t.add(row{name: "OPEN→OPENED p99 (ms)", unit: "%.2f", scale: 1, s: p99})
	}
	if filter.MatchString("open/close rate") {
		s := measure("open/close rate", func() (float64, float64, error) {
			b, err := cycleRateDirect(500, 16)
			if err != nil {
				return 0, 0, err
			}
			s, err := cycleRateSidecar(*sidecarBin, 500, 16)
			return b, s, err
		})
		t.add(row{name: "Open/close cycles per second (16 in flight)", unit: "%.0f", scale: 1, s: s, higherBetter: true, minRatio: ptr(0.8)})
	}
	portableRows(&t, filter, tmp)
	nodeRows(&t, filter)
	if filter.MatchString("idle memory") {
		var per series
		measure("idle memory", func() (float64, float64, error) {
			base, loaded, err := idleMemory(*sidecarBin, *idleN, time.Second)
			if err != nil {
				return 0, 0, err
			}
			per = append(per, pair{float64(base), float64(loaded-base) / float64(*idleN)})
			return 0, 0, nil
		})
		t.add(row{name: fmt.Sprintf("Sidecar RSS per idle terminal, %d open (KiB; baseline: whole RSS with 1)", *idleN),
			unit: "%.1f", scale: 1, s: per, maxValue: ptr(40.0), noRatio: true})
	}
	sessionRows(&t, filter, tmp)
	againstRows(&t, filter, tmp)
	persistRows(&t, filter, tmp)
	answerRows(&t, filter, tmp)
	remoteRows(&t, filter, tmp)
	if filter.MatchString("screen") {
		root, _ := os.Getwd()
		data, err := recordedStreams(root)
		if err != nil || len(data) == 0 {
			fatalf("no recorded streams under %s/testdata/screen: %v", root, err)
		}
		f, err := makeFlood(tmp, 64<<20)
		if err != nil {
			fatalf("%v", err)
		}
		s := measure("screen", func() (float64, float64, error) {
			b, err := directThroughput(f, 1, true)
			return b, screenThroughput(data), err
		})
		t.add(row{name: "Screen engine on recorded streams (MB/s; baseline: raw PTY read)", unit: "%.0f", scale: 1e-6, s: s, higherBetter: true})
	}

	fmt.Printf("\n%d pairs per row on %d CPUs, load average %s before and %s after; ptyplex-bench %s\n\n",
		*runs, runtime.NumCPU(), load1, loadAvg(), strings.Join(os.Args[1:], " "))
	t.print(os.Stdout)
	if *svgPath != "" {
		if err := os.MkdirAll(filepath.Dir(*svgPath), 0o755); err == nil {
			err = os.WriteFile(*svgPath, t.svg(), 0o644)
		}
		if err != nil {
			fatalf("writing %s: %v", *svgPath, err)
		}
	}
	if t.missed > 0 {
		fmt.Printf("\n%d budget%s missed.\n", t.missed, plural(t.missed))
	}
}

// measure runs fn -runs times; each call measures a baseline and then the
// subject, so each pair shares the machine's load of that moment.
func measure(name string, fn func() (base, subj float64, err error)) series {
	var s series
	for i := 0; i < *runs; i++ {
		b, v, err := fn()
		if err != nil {
			fatalf("%s: %v", name, err)
		}
		s = append(s, pair{b, v})
		fmt.Fprintf(os.Stderr, "%-24s run %d/%d\n", name, i+1, *runs)
	}
	return s
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return f[0]
}

func ptr[T any](v T) *T { return &v }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "ptyplex-bench: "+format+"\n", a...)
	os.Exit(1)
}
