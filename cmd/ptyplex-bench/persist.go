//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
)

// The persistent sidecar's figures, each against the plain sidecar in the
// same pair: throughput through the --persist bridge, the server's RSS per
// detached idle terminal, and the time a restarted host takes to get the
// first replayed byte of 16 terminals.

var persistSeq atomic.Int64

// persistEnvFor gives one run a runtime directory (and so a server) of
// its own.
func persistEnvFor(tmp string) (env []string, dir string) {
	dir = filepath.Join(tmp, fmt.Sprint("persist-", persistSeq.Add(1)))
	os.MkdirAll(dir, 0o700)
	env = append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+dir)
	if *sidecarEnv != "" {
		env = append(env, strings.Fields(*sidecarEnv)...)
	}
	return env, dir
}

// startBridge runs `bin --persist bench` as a host would.
func startBridge(bin string, env []string, onFrame func(proto.Frame), extra ...string) (*sidecarHost, error) {
	cmd := exec.Command(bin, append([]string{"--persist", "bench"}, extra...)...)
	cmd.Stderr = os.Stderr
	cmd.Env = env
	h := &sidecarHost{}
	s, err := client.StartStream(cmd, client.StreamOptions{
		Handle:      h.handler(onFrame),
		ReuseBodies: true,
		ReadBuffer:  1 << 20,
	})
	if err != nil {
		return nil, err
	}
	h.s = s
	return h, nil
}

func stopServer(bin string, env []string) {
	cmd := exec.Command(bin, "--persist", "bench", "--stop")
	cmd.Env = env
	cmd.Run()
}

// halfCloser makes Close of a Unix connection a half-close: the server
// sees the end of our frames and still sends what it has queued, as
// when a bridge's stdin ends.
type halfCloser struct{ *net.UnixConn }

func (c halfCloser) Close() error { return c.CloseWrite() }

// dialServer starts the server itself (as a bridge would, in a session
// of its own) and connects to its Unix socket: a host that speaks to the
// server directly, without the bridge process and its two copies.
func dialServer(bin string, env []string, dir string, onFrame func(proto.Frame), extra ...string) (*sidecarHost, error) {
	cmd := exec.Command(bin, append([]string{"--persist", "bench", "--serve"}, extra...)...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go cmd.Wait() // reaped once stopServer ends it
	// The socket's place, as sidecar/persist.Paths computes it from
	// PTYPLEX_RUNTIME_DIR (persistEnvFor) for this process's env.
	sock := filepath.Join(dir, "sidecar", "bench.sock")
	var c *net.UnixConn
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err = net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the persistent server never listened on %s: %v", sock, err)
		}
	}
	h := &sidecarHost{}
	h.s = client.NewStream(c, halfCloser{c}, client.StreamOptions{
		Handle:      h.handler(onFrame),
		ReuseBodies: true,
		ReadBuffer:  1 << 20,
	})
	return h, nil
}

// persistThroughput is sidecarThroughputCPU through the bridge, or with
// direct, on the server's socket; the CPU seconds are the server's and
// the bridge's. extra are flags for the bridge (or the server).
func persistThroughput(bin, tmp string, f flood, n int, raw, direct bool, extra ...string) (float64, float64, error) {
	env, dir := persistEnvFor(tmp)
	defer stopServer(bin, env)
	got := make(map[string]int64, n)
	exits := 0
	var ferr error
	all := make(chan struct{})
	start := func(bin string, env []string, onFrame func(proto.Frame)) (*sidecarHost, error) {
		return startBridge(bin, env, onFrame, extra...)
	}
	if direct {
		start = func(bin string, env []string, onFrame func(proto.Frame)) (*sidecarHost, error) {
			return dialServer(bin, env, dir, onFrame, extra...)
		}
	}
	h, err := start(bin, env, func(fr proto.Frame) {
		switch fr.Type {
		case proto.TypeOutput:
			id, data, _ := proto.ParseData(fr.Body)
			got[id] += int64(len(data))
		case proto.TypeExit:
			if err := exitOK(fr.Body); err != nil && ferr == nil {
				ferr = err
			}
			if exits++; exits == n {
				close(all)
			}
		case proto.TypeError:
			ferr = fmt.Errorf("ERROR %s", fr.Body)
		}
	})
	if err != nil {
		return 0, 0, err
	}
	if err := h.ready(); err != nil {
		return 0, 0, err
	}
	// The CPU the server and the bridge spent before the flood, starting.
	used := func() float64 {
		var cpu float64
		if pid, err := serverPid(dir); err == nil {
			cpu, _ = cpuSeconds(pid)
		}
		if !direct {
			c, _ := cpuSeconds(h.pid())
			cpu += c
		}
		return cpu
	}
	cpu0 := used()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := h.open(fmt.Sprint("t", i), "/bin/sh", f.script(raw)...); err != nil {
			return 0, 0, err
		}
	}
	select {
	case <-all:
	case <-h.readEnded():
		return 0, 0, fmt.Errorf("persist output ended early: %v", h.readErr())
	case <-time.After(10 * time.Minute):
		return 0, 0, fmt.Errorf("timed out after %d of %d EXITs", exits, n)
	}
	elapsed := time.Since(t0)
	// Every EXIT is in: the work is done; the server and the bridge
	// are still there to be asked what it cost them.
	cpu := used() - cpu0
	h.stop()
	if ferr != nil {
		return 0, 0, ferr
	}
	if len(got) != n {
		return 0, 0, fmt.Errorf("persist: output from %d of %d terminals", len(got), n)
	}
	for id, b := range got {
		if b != f.want(raw) {
			return 0, 0, fmt.Errorf("persist: %s received %d bytes, want %d", id, b, f.want(raw))
		}
	}
	return float64(int64(n)*f.want(raw)) / elapsed.Seconds(), cpu, nil
}

// detachedMemory opens n idle terminals through a bridge, ends the bridge
// (so every terminal is detached) and returns the server's RSS in KiB
// with one terminal and with n+1.
func detachedMemory(bin, tmp string, n int, settle time.Duration) (base, loaded int, err error) {
	env, dir := persistEnvFor(tmp)
	defer stopServer(bin, env)
	open := func(ids []string) error {
		ready := make(chan struct{}, len(ids))
		seen := map[string]bool{}
		h, err := startBridge(bin, env, func(f proto.Frame) {
			if f.Type == proto.TypeError {
				fmt.Fprintf(os.Stderr, "ERROR %s\n", f.Body)
			}
			if f.Type == proto.TypeOutput {
				id, _, _ := proto.ParseData(f.Body)
				if !seen[id] {
					seen[id] = true
					ready <- struct{}{}
				}
			}
		})
		if err != nil {
			return err
		}
		defer h.stop()
		for _, id := range ids {
			if err := h.open(id, "/bin/sh", idleScript...); err != nil {
				return err
			}
		}
		for range ids {
			select {
			case <-ready:
			case <-time.After(2 * time.Minute):
				return fmt.Errorf("idle terminals never printed their prompt")
			}
		}
		return nil
	}
	if err := open([]string{"first"}); err != nil {
		return 0, 0, err
	}
	pid, err := serverPid(dir)
	if err != nil {
		return 0, 0, err
	}
	time.Sleep(settle)
	if base, err = rssKiB(pid); err != nil {
		return 0, 0, err
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("idle", i)
	}
	if err := open(ids); err != nil {
		return 0, 0, err
	}
	time.Sleep(settle)
	loaded, err = rssKiB(pid)
	return base, loaded, err
}

// reattachTime: 16 detached terminals have each printed 64 KiB; a new
// host starts a bridge and ATTACHes all at offset 0. The figure is the
// time from starting the bridge to the first replayed byte of the last
// of them. The baseline is what a host without persistence does on a
// restart: start a plain sidecar and OPEN 16 terminals, to their first
// byte of output.
func reattachTime(bin, tmp string, n int) (base, subj float64, err error) {
	script := []string{"-c", "head -c 65536 /dev/zero | tr '\\0' x; exec cat"}
	firsts := func(k int) (func(proto.Frame), chan struct{}) {
		seen := map[string]bool{}
		done := make(chan struct{})
		return func(f proto.Frame) {
			if f.Type == proto.TypeOutput {
				id, _, _ := proto.ParseData(f.Body)
				if !seen[id] {
					seen[id] = true
					if len(seen) == k {
						close(done)
					}
				}
			}
		}, done
	}
	wait := func(done chan struct{}) error {
		select {
		case <-done:
			return nil
		case <-time.After(time.Minute):
			return fmt.Errorf("no output from all %d terminals", n)
		}
	}
	// Baseline: a fresh plain sidecar.
	on, done := firsts(n)
	t0 := time.Now()
	h, err := startSidecar(bin, on)
	if err != nil {
		return 0, 0, err
	}
	for i := 0; i < n; i++ {
		h.open(fmt.Sprint("t", i), "/bin/sh", script...)
	}
	if err := wait(done); err != nil {
		return 0, 0, err
	}
	base = time.Since(t0).Seconds() * 1000
	h.stop()

	env, _ := persistEnvFor(tmp)
	defer stopServer(bin, env)
	produced := regexp.MustCompile(`"produced":65536`)
	listed := make(chan bool, 16)
	on, done = firsts(n)
	h, err = startBridge(bin, env, func(f proto.Frame) {
		on(f)
		if f.Type == proto.TypeListed {
			listed <- len(produced.FindAll(f.Body, -1)) == n
		}
	})
	if err != nil {
		return 0, 0, err
	}
	for i := 0; i < n; i++ {
		h.open(fmt.Sprint("t", i), "/bin/sh", script...)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		h.s.SendJSON(proto.TypeList, struct{}{})
		if <-listed {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("terminals never produced their 64 KiB")
		}
	}
	h.stop()
	on, done = firsts(n)
	t0 = time.Now()
	h, err = startBridge(bin, env, on)
	if err != nil {
		return 0, 0, err
	}
	for i := 0; i < n; i++ {
		h.s.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: fmt.Sprint("t", i)})
	}
	if err := wait(done); err != nil {
		return 0, 0, err
	}
	subj = time.Since(t0).Seconds() * 1000
	h.stop()
	return base, subj, nil
}

// floodingMemory opens n `yes` terminals with 1 MiB ring journals through
// a bridge, ends the bridge, waits until every journal has wrapped, and
// returns the server's RSS in KiB against the journals' total.
func floodingMemory(bin, tmp string, n int) (journals, rss int, err error) {
	env, dir := persistEnvFor(tmp)
	defer stopServer(bin, env)
	const journal = 1 << 20
	wrapped := make(chan int, 64)
	h, err := startBridge(bin, env, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeError:
			fmt.Fprintf(os.Stderr, "ERROR %s\n", f.Body)
		case proto.TypeListed:
			var l proto.Listed
			json.Unmarshal(f.Body, &l)
			k := 0
			for _, e := range l.Terminals {
				if e.Start > 2*journal {
					k++
				}
			}
			wrapped <- k
		}
	})
	if err != nil {
		return 0, 0, err
	}
	zero := uint64(0)
	for i := 0; i < n; i++ {
		// No credit: nothing is sent to this host, all goes to the journals.
		h.s.SendJSON(proto.TypeOpen, map[string]any{"terminalId": fmt.Sprint("y", i), "cols": 80, "rows": 24,
			"cmd": "yes", "journal": journal, "credit": zero})
	}
	// Detach by ending the connection: with nobody holding them, the
	// ring journals wrap.
	h.s.SendJSON(proto.TypeList, struct{}{})
	<-wrapped
	h.stop()
	probe, err := startBridge(bin, env, func(f proto.Frame) {
		if f.Type == proto.TypeListed {
			var l proto.Listed
			json.Unmarshal(f.Body, &l)
			k := 0
			for _, e := range l.Terminals {
				if e.Start > 2*journal {
					k++
				}
			}
			wrapped <- k
		}
	})
	if err != nil {
		return 0, 0, err
	}
	defer probe.stop()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		probe.s.SendJSON(proto.TypeList, struct{}{})
		if <-wrapped == n {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("journals never wrapped")
		}
	}
	pid, err := serverPid(dir)
	if err != nil {
		return 0, 0, err
	}
	rss, err = rssKiB(pid)
	return n * journal >> 10, rss, err
}

// persistRows adds the persistent sidecar's rows.
func persistRows(t *table, filter *regexp.Regexp, tmp string) {
	for _, direct := range []bool{false, true} {
		for _, n := range []int{1, 16} {
			how, via := "bridge", "through the bridge"
			if direct {
				how, via = "socket", "on the server's socket"
			}
			name := fmt.Sprintf("persist throughput %s ×%d", how, n)
			if !filter.MatchString(name) {
				continue
			}
			f, err := makeFlood(tmp, int64(*totalMiB)<<20/int64(n))
			if err != nil {
				fatalf("%v", err)
			}
			// The CPU the processes between the PTYs and the host used,
			// per run: steadier than throughput on a loaded machine,
			// where it says what the throughput ratio is made of.
			var cpu series
			s := measure(name, func() (float64, float64, error) {
				b, bcpu, err := sidecarThroughputCPU(*sidecarBin, f, n, false)
				if err != nil {
					return 0, 0, err
				}
				v, vcpu, err := persistThroughput(*sidecarBin, tmp, f, n, false, direct)
				cpu = append(cpu, pair{bcpu, vcpu})
				return b, v, err
			})
			t.add(row{name: fmt.Sprintf("Throughput through --persist %s, %d terminal%s, cooked (MB/s; baseline: plain sidecar)", via, n, plural(n)),
				unit: "%.0f", scale: 1e-6, s: s, higherBetter: true, minRatio: ptr(0.95)})
			procs := "server"
			if !direct {
				procs = "server and bridge"
			}
			t.add(row{name: fmt.Sprintf("CPU of the %s for that run (s; baseline: plain sidecar)", procs),
				unit: "%.2f", scale: 1, s: cpu, maxRatio: ptr(1.15)})
		}
	}
	journalDirRows(t, filter, tmp)
	if filter.MatchString("persist detached memory") {
		var per series
		measure("persist detached memory", func() (float64, float64, error) {
			base, loaded, err := detachedMemory(*sidecarBin, tmp, *idleN, time.Second)
			if err != nil {
				return 0, 0, err
			}
			per = append(per, pair{float64(base), float64(loaded-base) / float64(*idleN)})
			return 0, 0, nil
		})
		t.add(row{name: fmt.Sprintf("Persistent server RSS per detached idle terminal, %d (KiB; baseline: whole RSS with 1)", *idleN),
			unit: "%.1f", scale: 1, s: per, noRatio: true})
	}
	if filter.MatchString("persist flooding memory") {
		s := measure("persist flooding memory", func() (float64, float64, error) {
			j, rss, err := floodingMemory(*sidecarBin, tmp, 64)
			return float64(j), float64(rss), err
		})
		t.add(row{name: "Persistent server RSS, 64 detached terminals flooding into 1 MiB journals (KiB; baseline: the journals)",
			unit: "%.0f", scale: 1, s: s, maxRatio: ptr(1.15)})
	}
	if filter.MatchString("persist snapshot") {
		var att, lst, grew series
		measure("persist snapshot", func() (float64, float64, error) {
			a, l, sn, g, r, err := snapshotLatency(*sidecarBin, tmp)
			att = append(att, pair{sn, a})
			lst = append(lst, pair{sn, l})
			grew = append(grew, pair{float64(r), float64(g)})
			return 0, 0, err
		})
		t.add(row{name: "ATTACHED for a 256 MiB journal that needs a SNAPSHOT (ms from the ATTACH; baseline: the SNAPSHOT)",
			unit: "%.1f", scale: 1, s: att, maxValue: ptr(100.0)})
		t.add(row{name: "LISTED from another connection meanwhile (ms from the ATTACH; baseline: the SNAPSHOT)",
			unit: "%.1f", scale: 1, s: lst, maxValue: ptr(100.0)})
		t.add(row{name: "Server RSS growth while the SNAPSHOT is built (KiB; baseline: the SNAPSHOT's size)",
			unit: "%.0f", scale: 1, s: grew, maxRatio: ptr(2.0)})
	}
	viewerRows(t, filter, tmp)
	if filter.MatchString("persist reattach") {
		s := measure("persist reattach", func() (float64, float64, error) {
			return reattachTime(*sidecarBin, tmp, 16)
		})
		t.add(row{name: "Reattach 16 terminals, start to first replayed byte of each (ms; baseline: fresh sidecar, 16 OPENs)",
			unit: "%.1f", scale: 1, s: s})
	}
}

// snapshotLatency fills a 256 MiB journal past its size (a detached ring
// terminal writing 300 MB of 120-byte lines), then ATTACHes it from the
// start, which costs a SNAPSHOT, and at once LISTs from another
// connection. It returns how long the ATTACHED and the LISTED took and
// how long the SNAPSHOT did (all from the ATTACH), in ms, and the
// server's RSS growth meanwhile in KiB.
func snapshotLatency(bin, tmp string) (attached, listed, snapshot float64, grew, rendered int, err error) {
	env, dir := persistEnvFor(tmp)
	defer stopServer(bin, env)
	const journal = 256 << 20
	lists := make(chan proto.Listed, 16)
	onList := func(f proto.Frame) {
		if f.Type == proto.TypeListed {
			var l proto.Listed
			json.Unmarshal(f.Body, &l)
			lists <- l
		}
	}
	h1, err := startBridge(bin, env, onList)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	line := strings.Repeat("x", 119)
	h1.s.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "big", "cols": 120, "rows": 40, "journal": journal,
		"cmd": "/bin/sh", "args": []string{"-c", "yes " + line + " | head -c 300000000; exec sleep 1000"}, "credit": 0})
	// Ending the bridge detaches the terminal: its ring journal wraps.
	h1.s.SendJSON(proto.TypeList, struct{}{})
	<-lists
	h1.stop()
	probe, err := startBridge(bin, env, onList)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	defer probe.stop()
	var last uint64
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		probe.s.SendJSON(proto.TypeList, struct{}{})
		l := <-lists
		if len(l.Terminals) == 1 && l.Terminals[0].Start > 0 && l.Terminals[0].Produced == last {
			break
		}
		if len(l.Terminals) == 1 {
			last = l.Terminals[0].Produced
		}
		if time.Now().After(deadline) {
			return 0, 0, 0, 0, 0, fmt.Errorf("the journal never filled: %+v", l)
		}
	}
	pid, err := serverPid(dir)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	before, err := rssKiB(pid)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	type stamp struct {
		typ  proto.Type
		at   time.Time
		size int
	}
	got := make(chan stamp, 4)
	ready := make(chan struct{}, 1)
	h2, err := startBridge(bin, env, func(f proto.Frame) {
		switch f.Type {
		case proto.TypeAttached, proto.TypeSnapshot, proto.TypeError:
			got <- stamp{f.Type, time.Now(), len(f.Body)}
		case proto.TypeListed:
			ready <- struct{}{}
		}
	})
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	defer h2.stop()
	// The clock starts once h2's bridge is connected (a LIST answered
	// through it): its start-up is not the server's answer to ATTACH.
	h2.s.SendJSON(proto.TypeList, struct{}{})
	select {
	case <-ready:
	case <-time.After(time.Minute):
		return 0, 0, 0, 0, 0, fmt.Errorf("the second bridge did not answer LIST within a minute")
	}
	var peak int
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r, err := rssKiB(pid); err == nil && r > peak {
				peak = r
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	h2.s.SendJSON(proto.TypeAttach, map[string]any{"terminalId": "big", "offset": 0, "credit": 0})
	probe.s.SendJSON(proto.TypeList, struct{}{})
	<-lists
	listed = float64(time.Since(t0)) / 1e6
	for n := 0; n < 2; n++ {
		select {
		case s := <-got:
			switch s.typ {
			case proto.TypeAttached:
				attached = float64(s.at.Sub(t0)) / 1e6
			case proto.TypeSnapshot:
				snapshot = float64(s.at.Sub(t0)) / 1e6
				rendered = s.size / 1024
			default:
				return 0, 0, 0, 0, 0, fmt.Errorf("ERROR for the ATTACH")
			}
		case <-time.After(time.Minute):
			return 0, 0, 0, 0, 0, fmt.Errorf("no ATTACHED and SNAPSHOT within a minute")
		}
	}
	close(stopSampling)
	<-sampled
	return attached, listed, snapshot, peak - before, rendered, nil
}
