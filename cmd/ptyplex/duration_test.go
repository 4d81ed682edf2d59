//go:build unix

package main

import (
	"strings"
	"testing"
	"time"
)

func TestDurationFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"300ms", 300 * time.Millisecond, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"0", 0, ""},
		{"2562047h", 2562047 * time.Hour, ""},
		// Past what a Duration holds (2^63 ns): clamped, not wrapped.
		{"2562048h", maxDuration, ""},
		{"9999999999h", maxDuration, ""},
		{"99999999999999999999s", maxDuration, ""},
		{"-1s", 0, "must not be negative"},
		{"-9999999999h", 0, "must not be negative"},
		{"soon", 0, "expected a duration"},
		{"5", 0, "expected a duration"},
	} {
		var d time.Duration
		err := durationFlag{&d}.Set(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, %v; want error %q", tc.in, d, err, tc.err)
			}
			continue
		}
		if err != nil || d != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.in, d, err, tc.want)
		}
	}
}

// TestWaitTimeoutFlagBounds: a negative --timeout or --quiet-for is a
// usage error; one past 2^63 ns is clamped and the wait still answers the
// way it would without a timeout.
func TestWaitTimeoutFlagBounds(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", "echo ready; exec cat")
	s.waitText("ready")
	for _, args := range [][]string{{"--timeout", "-1s"}, {"--quiet-for", "-5ms"}} {
		r := s.run(append([]string{"wait"}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "must not be negative") {
			t.Errorf("wait %v: %v", args, r)
		}
	}
	// Output is pending from here on (cat echoes), so the wait answers
	// at once; with a wrapped timeout it would report a timeout instead.
	s.input(`x\r`)
	for _, d := range []string{"2562047h", "9999999999h"} {
		r := s.run("wait", "--timeout", d)
		if r.code != 0 || r.stdout != "Terminal activity: true\nApplication exited: false\n" {
			t.Errorf("wait --timeout %s: %v", d, r)
		}
		s.input(`y\r`)
	}
}
