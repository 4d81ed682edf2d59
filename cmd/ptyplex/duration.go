//go:build unix

package main

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"time"
)

// maxDuration is the longest wait the CLI can express (about 292 years).
const maxDuration = time.Duration(math.MaxInt64)

// durationSyntax is what time.ParseDuration accepts. A string of this
// form that it still refuses is too large for a Duration.
var durationSyntax = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// durationFlag is a --timeout or --quiet-for value: a Go duration that must
// not be negative (a negative wait means nothing, and once passed for
// "none") and is clamped to maxDuration when it is larger, instead of the
// flag package's bare "parse error".
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return "0s"
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		if !durationSyntax.MatchString(s) {
			return errors.New("expected a duration such as 300ms, 5s, 2m or 1h30m")
		}
		if !strings.HasPrefix(s, "-") {
			*f.d = maxDuration // too large to hold: as long as can be
			return nil
		}
		d = -1
	}
	if d < 0 {
		return errors.New("a duration must not be negative")
	}
	*f.d = d
	return nil
}

// durationVar defines a durationFlag on c.
func (c *cli) durationVar(name, usage string) *time.Duration {
	d := new(time.Duration)
	c.fs.Var(durationFlag{d}, name, usage)
	return d
}
