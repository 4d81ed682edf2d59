//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The session measurements drive a `ptyplex start` daemon over its socket
// with raw JSON lines, as any client does.

// sessionDaemon starts a daemon running args and returns its socket.
func sessionDaemon(bin, dir string, args ...string) (sock string, stop func(), err error) {
	sock = filepath.Join(dir, fmt.Sprintf("s%d", time.Now().UnixNano()))
	out, err := exec.Command(bin, append([]string{"start", "--socket", sock, "--"}, args...)...).CombinedOutput()
	if err != nil {
		return "", nil, fmt.Errorf("ptyplex start: %v: %s", err, out)
	}
	return sock, func() { sessionRequest(sock, `{"type":"STOP"}`) }, nil
}

// sessionRequest sends one request line and returns the answer line.
func sessionRequest(sock, line string) ([]byte, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return nil, err
	}
	b, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(b, []byte(`"status":"ok"`)) {
		return nil, fmt.Errorf("%s: %s", line, b)
	}
	return b, nil
}

// socketFloor is the baseline for a session request: the same
// connect/write line/read line/close round trip against a Unix-socket
// server in this process that answers at once.
func socketFloor(dir string, samples int) ([]time.Duration, error) {
	sock := filepath.Join(dir, fmt.Sprintf("floor%d", time.Now().UnixNano()))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadBytes('\n'); err == nil {
					c.Write([]byte(`{"status":"ok"}` + "\n"))
				}
			}()
		}
	}()
	return timeRequests(sock, `{"type":"STATUS"}`, samples)
}

func timeRequests(sock, line string, samples int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		t0 := time.Now()
		if _, err := sessionRequest(sock, line); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// sessionRows measures the session face: OUTPUT and INPUT round trips
// against a bare socket request, and how soon a pending WAIT answers once
// the program writes, against a host's blocking read of the same program's
// PTY.
func sessionRows(t *table, filter *regexp.Regexp, tmp string) {
	bin, ok := sessionBin()
	if !ok {
		return
	}
	for _, req := range []struct{ name, line string }{
		{"OUTPUT", `{"type":"OUTPUT","format":"ascii"}`},
		{"INPUT", `{"type":"INPUT","data":"x"}`},
	} {
		if !filter.MatchString("session " + req.name) {
			continue
		}
		var p50, p99 series
		measure("session "+req.name, func() (float64, float64, error) {
			b, err := socketFloor(tmp, 300)
			if err != nil {
				return 0, 0, err
			}
			sock, stop, err := sessionDaemon(bin, tmp, "cat")
			if err != nil {
				return 0, 0, err
			}
			s, err := timeRequests(sock, req.line, 300)
			stop()
			if err != nil {
				return 0, 0, err
			}
			p50 = append(p50, pair{ms(percentile(b, 50)), ms(percentile(s, 50))})
			p99 = append(p99, pair{ms(percentile(b, 99)), ms(percentile(s, 99))})
			return 0, 0, nil
		})
		t.add(row{name: "Session " + req.name + " round trip p50 (ms; baseline: bare socket request)", unit: "%.3f", scale: 1, s: p50})
		t.add(row{name: "Session " + req.name + " round trip p99 (ms)", unit: "%.3f", scale: 1, s: p99})
	}
	if !filter.MatchString("session WAIT wake") {
		return
	}
	var p50, p99 series
	run := 0
	measure("session WAIT wake", func() (float64, float64, error) {
		// The order alternates from run to run: the second half of a
		// pair sees a machine warmed (or disturbed) by the first.
		run++
		var b, s []time.Duration
		var err error
		for i := 0; i < 2 && err == nil; i++ {
			if (i+run)%2 == 0 {
				b, err = waitWakeDirect(wakeSamples)
			} else {
				s, err = waitWakeSession(bin, tmp, wakeSamples)
			}
		}
		if err != nil {
			return 0, 0, err
		}
		p50 = append(p50, pair{ms(percentile(b, 50)), ms(percentile(s, 50))})
		p99 = append(p99, pair{ms(percentile(b, 99)), ms(percentile(s, 99))})
		return 0, 0, nil
	})
	t.add(row{name: fmt.Sprintf("Session WAIT wake-up after output p50 (ms, %d wakes a run; baseline: blocking read(2) on the PTY)", wakeSamples), unit: "%.3f", scale: 1, s: p50})
	t.add(row{name: "Session WAIT wake-up after output p99 (ms)", unit: "%.3f", scale: 1, s: p99, maxRatio: ptr(1.5)})
}

// wakeSamples is the number of wake-ups per side and run: enough that p99
// is the third slowest rather than the slowest of a handful (nearest rank
// over 250), at 5–7 s a side with a 20 ms tick.
const wakeSamples = 250

// The tick program is this binary run with tickEnv set: it prints the wall
// clock in nanoseconds every 20 ms, one write(2) per line, so the moment
// each line was written is in the line itself. Both sides of the WAIT
// measurement run it, so the child and the trigger are the same. Unlike a
// shell loop around date(1) and sleep(1), it does not fork and exec two
// programs right after each line, work that competed for the CPUs with
// whatever was waking up to read that line.
const tickEnv = "PTYPLEX_BENCH_TICK"

func init() {
	if os.Getenv(tickEnv) == "" {
		return
	}
	for {
		// Unbuffered: the line is one write on the PTY.
		if _, err := fmt.Printf("T%d\n", time.Now().UnixNano()); err != nil {
			os.Exit(0) // the PTY is gone
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tickCommand is the argv of the tick program.
func tickCommand() ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the tick program is this binary: %w", err)
	}
	return []string{"/usr/bin/env", tickEnv + "=1", self}, nil
}

var tickRE = regexp.MustCompile(`T(\d{19})`)

// wakeMargin: a tick stamped less than this after the waiter was in place
// (the WAIT request written; the read(2) called) may have come before the
// daemon parked the WAIT, and then measures the request path rather than a
// wake-up. Such samples are dropped on both sides, by the same rule.
const wakeMargin = 2 * time.Millisecond

// wakeSample is the delay from the tick stamped ns to woke, and whether it
// counts: the tick came at least wakeMargin after the waiter was in place,
// and within a second of the wake (anything later is a stale line).
func wakeSample(ns int64, placed, woke time.Time) (time.Duration, bool) {
	tick := time.Unix(0, ns)
	d := woke.Sub(tick)
	return d, tick.Sub(placed) >= wakeMargin && d > 0 && d < time.Second
}

// lastTick is the timestamp of the last tick line in b, if any.
func lastTick(b []byte) (int64, bool) {
	m := tickRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(string(m[len(m)-1][1]), 10, 64)
	return ns, err == nil
}

// waitWakeSession measures how long after the program writes a line a
// pending WAIT in activity mode returns, as its client sees it. Each WAIT
// clears the activity flag; when a tick came between two WAITs, the second
// answers at once and its sample is dropped by wakeMargin.
func waitWakeSession(bin, dir string, samples int) ([]time.Duration, error) {
	tick, err := tickCommand()
	if err != nil {
		return nil, err
	}
	sock, stop, err := sessionDaemon(bin, dir, tick...)
	if err != nil {
		return nil, err
	}
	defer stop()
	out := make([]time.Duration, 0, samples)
	for len(out) < samples {
		placed, woke, err := timedWait(sock, `{"type":"WAIT","activity":true}`)
		if err != nil {
			return nil, err
		}
		b, err := sessionRequest(sock, `{"type":"OUTPUT","format":"ascii"}`)
		if err != nil {
			return nil, err
		}
		var resp struct {
			Data struct {
				Screen string `json:"screen"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			return nil, fmt.Errorf("OUTPUT answer: %w", err)
		}
		// The last tick on the screen is the one that woke the WAIT, or a
		// later one (then the delay is negative and dropped).
		if ns, ok := lastTick([]byte(resp.Data.Screen)); ok {
			if d, ok := wakeSample(ns, placed, woke); ok {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// timedWait sends one request and returns when it was written and when
// its whole answer line had been read. The client waits as the baseline
// does, in a blocking read(2) (on a socket of its own, not through the
// runtime's poller), so both sides are timed at the same kind of wake-up.
func timedWait(sock, line string) (placed, woke time.Time, err error) {
	// SOCK_CLOEXEC is not portable (macOS); a child forked in between
	// would only hold a benchmark socket.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return placed, woke, fmt.Errorf("socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(int64(time.Minute))
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return placed, woke, fmt.Errorf("SO_RCVTIMEO: %w", err)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		return placed, woke, fmt.Errorf("connect %s: %w", sock, err)
	}
	if _, err := syscall.Write(fd, []byte(line+"\n")); err != nil {
		return placed, woke, fmt.Errorf("write request: %w", err)
	}
	placed = time.Now()
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte("\n")) {
		n, err := syscall.Read(fd, buf)
		woke = time.Now()
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return placed, woke, fmt.Errorf("read answer: %w", err)
		}
		if n == 0 {
			return placed, woke, fmt.Errorf("%s: connection closed after %q", line, got)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Contains(got, []byte(`"status":"ok"`)) {
		return placed, woke, fmt.Errorf("%s: %s", line, got)
	}
	return placed, woke, nil
}

// waitWakeDirect is the baseline: what a host can do on its own, the same
// program on a PTY of its own (creack/pty) read with blocking read(2) calls
// on the master, no poller; the wake-up is the read that returns the line.
func waitWakeDirect(samples int) ([]time.Duration, error) {
	tick, err := tickCommand()
	if err != nil {
		return nil, err
	}
	c, err := startPlain(tick[0], tick[1:]...)
	if err != nil {
		return nil, err
	}
	defer func() {
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		c.master.Close()
		c.cmd.Wait()
	}()
	buf := make([]byte, 4096)
	out := make([]time.Duration, 0, samples)
	for len(out) < samples {
		placed := time.Now()
		n, err := syscall.Read(c.fd, buf)
		woke := time.Now()
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the tick PTY: %w", err)
		}
		if ns, ok := lastTick(buf[:n]); ok {
			if d, ok := wakeSample(ns, placed, woke); ok {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// sessionBin finds bin/ptyplex next to the sidecar binary.
func sessionBin() (string, bool) {
	p := filepath.Join(filepath.Dir(*sidecarBin), "ptyplex")
	_, err := os.Stat(p)
	return p, err == nil && !strings.HasSuffix(p, ".sh")
}
