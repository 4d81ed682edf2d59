//go:build unix

package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// row is one line of the result table.
type row struct {
	name         string
	unit         string  // fmt verb for values
	scale        float64 // applied to values before printing
	s            series
	higherBetter bool
	minRatio     *float64 // budget: ratio at least this
	maxRatio     *float64 // budget: ratio at most this (lower-is-better rows: subject/baseline)
	maxValue     *float64 // budget: the subject's median at most this
	noRatio      bool     // the baseline is context, not a comparison
}

type table struct {
	rows   []row
	missed int
}

func (t *table) add(r row) { t.rows = append(t.rows, r) }

// verdict judges a row against its budget on the medians.
func (r row) verdict() (string, bool) {
	rat := summarize(r.s.ratios()).med
	subj := summarize(r.s.subjs()).med * r.scale
	switch {
	case r.minRatio != nil && rat >= *r.minRatio:
		return fmt.Sprintf("≥ %.2f ✅", *r.minRatio), true
	case r.minRatio != nil:
		return fmt.Sprintf("≥ %.2f ❌", *r.minRatio), false
	case r.maxRatio != nil && rat <= *r.maxRatio:
		return fmt.Sprintf("ratio ≤ %.2f ✅", *r.maxRatio), true
	case r.maxRatio != nil:
		return fmt.Sprintf("ratio ≤ %.2f ❌", *r.maxRatio), false
	case r.maxValue != nil && subj <= *r.maxValue:
		return fmt.Sprintf("≤ %g ✅", *r.maxValue), true
	case r.maxValue != nil:
		return fmt.Sprintf("≤ %g ❌", *r.maxValue), false
	}
	return "", true
}

func (t *table) print(w io.Writer) {
	fmt.Fprintln(w, "| Measurement | ptyplex, median (min–max) | baseline, median (min–max) | ratio, median (min–max) | budget |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range t.rows {
		scaled := func(v []float64) summary {
			s := summarize(v)
			return summary{s.med * r.scale, s.min * r.scale, s.max * r.scale}
		}
		ratio := summarize(r.s.ratios()).format("%.2f")
		if r.noRatio {
			ratio = "–"
		}
		v, ok := r.verdict()
		if !ok {
			t.missed++
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.name,
			scaled(r.s.subjs()).format(r.unit), scaled(r.s.bases()).format(r.unit), ratio, v)
	}
}

// svg draws the ratio of every comparable row as a bar from 1.0 (parity
// with the baseline) on a log scale, with its min–max whisker and budget
// ticks. Ratios span from ~0.5 (throughput) to hundreds (latency under a
// flood), hence the log scale.
func (t *table) svg() []byte {
	const (
		left, barW, rowH, top = 430, 360, 26, 40
	)
	var rows []row
	lo, hi := 0.1, 10.0
	for _, r := range t.rows {
		if r.noRatio || len(r.s) == 0 {
			continue
		}
		rows = append(rows, r)
		s := summarize(r.s.ratios())
		for s.max > hi {
			hi *= 10
		}
		for s.min > 0 && s.min < lo {
			lo /= 10
		}
	}
	x := func(v float64) float64 {
		v = math.Max(lo, math.Min(hi, v))
		return left + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*barW
	}
	h := top + len(rows)*rowH + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+barW+60, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">ptyplex / same-run baseline, log scale (throughput: higher is better; latency: lower is better)</text>`+"\n")
	for v := lo; v <= hi*1.0001; v *= 10 {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", x(v), x(v), top-4, h-26)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", x(v), h-10, v)
	}
	for i, r := range rows {
		y := float64(top + i*rowH)
		s := summarize(r.s.ratios())
		color := "#4a7bd0"
		if _, ok := r.verdict(); !ok {
			color = "#d05a4a"
		}
		x0, x1 := x(1), x(s.med)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%s</text>`+"\n", left-8, y+15, escape(r.name))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="16" fill="%s"/>`+"\n", x0, y+3, math.Max(1, x1-x0), color)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="black"/>`+"\n", x(s.min), x(s.max), y+11, y+11)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f">%.2f</text>`+"\n", math.Max(x(s.max), x(1))+4, y+15, s.med)
		for _, budget := range []*float64{r.minRatio, r.maxRatio} {
			if budget != nil {
				fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#d05a4a" stroke-width="2"/>`+"\n", x(*budget), x(*budget), y, y+22)
			}
		}
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#333" stroke-dasharray="4 3"/>`+"\n", x(1), x(1), top-4, h-26)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
