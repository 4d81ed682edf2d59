//go:build unix

package main

import (
	"fmt"
	"slices"
	"time"
)

// pair is one interleaved measurement: the baseline and the subject taken
// back to back, so that both saw the same machine load.
type pair struct{ base, subj float64 }

// series is the pairs of one metric over several runs.
type series []pair

// ratio is subj/base, or base/subj when lower is better, so that a ratio
// above 1 always means "ptyplex is at least as good as the baseline"
// for throughput and "ptyplex costs this many times the baseline" for
// latencies.
func (s series) ratios() []float64 {
	r := make([]float64, 0, len(s))
	for _, p := range s {
		if p.base != 0 {
			r = append(r, p.subj/p.base)
		}
	}
	return r
}

func (s series) bases() []float64 { return pluck(s, func(p pair) float64 { return p.base }) }
func (s series) subjs() []float64 { return pluck(s, func(p pair) float64 { return p.subj }) }

func pluck(s series, f func(pair) float64) []float64 {
	out := make([]float64, len(s))
	for i, p := range s {
		out[i] = f(p)
	}
	return out
}

// summary is the median with the range it came from.
type summary struct{ med, min, max float64 }

func summarize(v []float64) summary {
	if len(v) == 0 {
		return summary{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{med: med, min: s[0], max: s[len(s)-1]}
}

// percentile of durations, nearest-rank.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// format renders a summary with a unit-specific number format.
func (s summary) format(f string) string {
	return fmt.Sprintf(f+" (%s–%s)", s.med, fmt.Sprintf(f, s.min), fmt.Sprintf(f, s.max))
}
