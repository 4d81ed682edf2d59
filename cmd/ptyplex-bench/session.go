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

// tickScript prints the wall clock in nanoseconds every 50 ms: the moment
// each line was written is in the line itself.
var tickScript = []string{"/bin/sh", "-c", "while :; do date +T%s%N; sleep 0.05; done"}

var tickRE = regexp.MustCompile(`T(\d{19})`)

// waitWakeSession measures how long after the program writes a line a
// WAIT in activity mode returns.
func waitWakeSession(bin, dir string, samples int) ([]time.Duration, error) {
	sock, stop, err := sessionDaemon(bin, dir, tickScript...)
	if err != nil {
		return nil, err
	}
	defer stop()
	out := make([]time.Duration, 0, samples)
	for len(out) < samples {
		// Consume any pending activity so the next WAIT waits for a tick.
		if _, err := sessionRequest(sock, `{"type":"WAIT","activity":true}`); err != nil {
			return nil, err
		}
		if _, err := sessionRequest(sock, `{"type":"WAIT","activity":true}`); err != nil {
			return nil, err
		}
		woke := time.Now()
		b, err := sessionRequest(sock, `{"type":"OUTPUT","format":"ascii"}`)
		if err != nil {
			return nil, err
		}
		var resp struct {
			Data struct {
				Screen string `json:"screen"`
			} `json:"data"`
		}
		json.Unmarshal(b, &resp)
		m := tickRE.FindAllStringSubmatch(resp.Data.Screen, -1)
		if len(m) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(m[len(m)-1][1], 10, 64)
		if d := woke.Sub(time.Unix(0, ns)); d > 0 && d < time.Second {
			out = append(out, d)
		}
	}
	return out, nil
}

// waitWakeDirect is the baseline: the same program on a PTY read directly;
// the wake-up is the read that returns its line.
func waitWakeDirect(samples int) ([]time.Duration, error) {
	p, err := startDirect(tickScript[0], tickScript[1:]...)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	defer p.SignalGroup(9)
	buf := make([]byte, 4096)
	out := make([]time.Duration, 0, samples)
	for len(out) < samples {
		n, err := p.Read(buf)
		woke := time.Now()
		if err != nil {
			return nil, err
		}
		m := tickRE.FindAllSubmatch(buf[:n], -1)
		if len(m) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(string(m[len(m)-1][1]), 10, 64)
		if d := woke.Sub(time.Unix(0, ns)); d > 0 && d < time.Second {
			out = append(out, d)
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
