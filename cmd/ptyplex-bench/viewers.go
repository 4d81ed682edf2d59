//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Viewers of a persistent terminal (ATTACH "mode":"view") must not slow
// its holder: the row floods one terminal through the bridge with and
// without 8 viewers, one of which never reads, and reports the holder's
// throughput with them against without them, in the same pair.

// viewerRows adds the viewers' row to the persistent sidecar's.
func viewerRows(t *table, filter *regexp.Regexp, tmp string) {
	const name = "persist viewers"
	if !filter.MatchString(name) {
		return
	}
	f, err := makeFlood(tmp, int64(*totalMiB)<<20)
	if err != nil {
		fatalf("%v", err)
	}
	var skipped int
	// The CPU the server, and this process as the hosts, spent on each
	// run's flood: steadier than throughput on a loaded machine, and
	// what the viewers cost.
	var cpu, hostCPU series
	s := measure(name, func() (float64, float64, error) {
		b, _, bc, err := viewedThroughput(*sidecarBin, tmp, f, 0)
		if err != nil {
			return 0, 0, err
		}
		v, sk, vc, err := viewedThroughput(*sidecarBin, tmp, f, 8)
		skipped += sk
		cpu = append(cpu, pair{bc.server, vc.server})
		hostCPU = append(hostCPU, pair{bc.hosts, vc.hosts})
		return b, v, err
	})
	if skipped > 0 {
		fmt.Fprintf(os.Stderr, "%s: reading viewers were skipped forward %d times in %d runs (they fell out of the journal)\n", name, skipped, *runs)
	}
	t.add(row{name: "Throughput, 1 holder flooding + 8 viewers, one never reading, through the bridge (MB/s; baseline: no viewers)",
		unit: "%.0f", scale: 1e-6, s: s, higherBetter: true, minRatio: ptr(0.95)})
	t.add(row{name: "CPU of the server for that run's flood (s; baseline: no viewers)", unit: "%.2f", scale: 1, s: cpu})
	t.add(row{name: "CPU of the hosts (this process) for that run's flood (s; baseline: the holder's alone)", unit: "%.2f", scale: 1, s: hostCPU})
}

// floodCPU is the CPU a run's flood took, from the line typed to the
// holder's EXIT.
type floodCPU struct{ server, hosts float64 }

// selfCPU is the user and system CPU time this process has used so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// viewedThroughput opens one cooked terminal through a bridge that waits
// for a line before it floods, attaches viewers (each through a bridge of
// its own; the last one's host never reads its stdout), starts the flood
// and returns the holder's bytes per second, from the line to its EXIT.
// skipped is how many SNAPSHOTs the reading viewers were sent: each is a
// viewer that fell out of the journal.
func viewedThroughput(bin, tmp string, f flood, viewers int) (bps float64, skipped int, cpu floodCPU, err error) {
	env, dir := persistEnvFor(tmp)
	defer stopServer(bin, env)
	var mu sync.Mutex
	var herr error
	var got int64
	exited, opened := make(chan struct{}), make(chan struct{})
	h, err := startBridge(bin, env, func(fr proto.Frame) {
		switch fr.Type {
		case proto.TypeOpened:
			close(opened)
		case proto.TypeOutput:
			_, data, _ := proto.ParseData(fr.Body)
			got += int64(len(data))
		case proto.TypeExit:
			mu.Lock()
			herr = exitOK(fr.Body)
			mu.Unlock()
			close(exited)
		case proto.TypeError:
			mu.Lock()
			herr = fmt.Errorf("ERROR %s", fr.Body)
			mu.Unlock()
		}
	})
	if err != nil {
		return 0, 0, cpu, err
	}
	defer h.stop()
	script := "read x; exec cat " + f.path
	if err := h.open("v", "/bin/sh", "-c", script); err != nil {
		return 0, 0, cpu, err
	}
	select {
	case <-opened:
	case <-time.After(time.Minute):
		return 0, 0, cpu, fmt.Errorf("the holder: no OPENED")
	}
	done := make(chan struct{}) // the reading viewers' EXITs
	reading := max(viewers-1, 0)
	var exits int
	for i := 0; i < reading; i++ {
		attached := make(chan struct{})
		v, err := startBridge(bin, env, func(fr proto.Frame) {
			switch fr.Type {
			case proto.TypeAttached:
				close(attached)
			case proto.TypeError:
				fmt.Fprintf(os.Stderr, "viewer: ERROR %s\n", fr.Body)
			case proto.TypeSnapshot:
				mu.Lock()
				skipped++
				mu.Unlock()
			case proto.TypeExit:
				mu.Lock()
				if exits++; exits == reading {
					close(done)
				}
				mu.Unlock()
			}
		})
		if err != nil {
			return 0, 0, cpu, err
		}
		defer v.stop()
		if err := v.s.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "v", Mode: proto.AttachView}); err != nil {
			return 0, 0, cpu, err
		}
		select {
		case <-attached:
		case <-time.After(time.Minute):
			return 0, 0, cpu, fmt.Errorf("viewer %d: no ATTACHED", i)
		}
	}
	if viewers > 0 {
		stuck, err := stuckViewer(bin, env)
		if err != nil {
			return 0, 0, cpu, err
		}
		defer stuck()
	}
	if reading == 0 {
		close(done)
	}
	pid, _ := serverPid(dir)
	server0, _ := cpuSeconds(pid)
	hosts0 := selfCPU()
	t0 := time.Now()
	if err := h.input("v", []byte("\n")); err != nil {
		return 0, 0, cpu, err
	}
	select {
	case <-exited:
	case <-h.readEnded():
		return 0, 0, cpu, fmt.Errorf("the holder's output ended early: %v", h.readErr())
	case <-time.After(10 * time.Minute):
		return 0, 0, cpu, fmt.Errorf("the holder: no EXIT")
	}
	elapsed := time.Since(t0)
	server1, _ := cpuSeconds(pid)
	cpu = floodCPU{server: server1 - server0, hosts: selfCPU() - hosts0}
	// The reading viewers finish before the next run starts.
	select {
	case <-done:
	case <-time.After(time.Minute):
		return 0, 0, cpu, fmt.Errorf("%d of %d reading viewers had their EXIT a minute after the holder", exits, reading)
	}
	mu.Lock()
	defer mu.Unlock()
	if herr != nil {
		return 0, 0, cpu, herr
	}
	if want := f.want(false) + 2; got != want { // the line typed echoes as \r\n
		return 0, 0, cpu, fmt.Errorf("the holder received %d bytes, want %d", got, want)
	}
	return float64(got) / elapsed.Seconds(), skipped, cpu, nil
}

// stuckViewer starts a bridge that attaches a viewer of "v" and whose
// stdout nobody reads; the function it returns ends it.
func stuckViewer(bin string, env []string) (func(), error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(bin, "--persist", "bench")
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, inR, outW, os.Stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		outR.Close()
		inW.Close()
		return nil, err
	}
	end := func() {
		cmd.Process.Kill()
		cmd.Wait()
		inW.Close()
		outR.Close()
	}
	if err := proto.WriteFrame(inW, proto.TypeAttach, proto.Marshal(proto.Attach{TerminalID: "v", Mode: proto.AttachView})); err != nil {
		end()
		return nil, err
	}
	// Its ATTACHED, and nothing more is read.
	outR.SetReadDeadline(time.Now().Add(time.Minute))
	if fr, err := proto.NewReader(outR).ReadFrame(); err != nil || fr.Type != proto.TypeAttached {
		end()
		return nil, fmt.Errorf("the stuck viewer: no ATTACHED: %v", err)
	}
	return end, nil
}
