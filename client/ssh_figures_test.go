package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/sshtest"
)

// TestRemoteFigures measures a terminal through ssh to 127.0.0.1 against
// ssh itself in the same run: keystroke echo (p50, p99) against `ssh -tt
// host cat`, and throughput of `cat FILE` against `ssh host cat FILE`. It
// runs only when PTYPLEX_REMOTE_FIGURES is set (a minute of work, and the
// figures are for the README, not a pass/fail budget on a shared machine).
func TestRemoteFigures(t *testing.T) {
	if os.Getenv("PTYPLEX_REMOTE_FIGURES") == "" {
		t.Skip("set PTYPLEX_REMOTE_FIGURES=1 to measure")
	}
	srv := sshtest.Start(t)
	const rounds = 300
	file := filepath.Join(t.TempDir(), "data")
	data := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz ptyplex remote throughput\n"), (64<<20)/64)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}

	// The ssh floor: one key through a remote PTY and back.
	argv := srv.Command(true, "stty raw -echo; exec cat")
	ssh := exec.Command(argv[0], argv[1:]...)
	in, _ := ssh.StdinPipe()
	out, _ := ssh.StdoutPipe()
	if err := ssh.Start(); err != nil {
		t.Fatal(err)
	}
	floor := echoRounds(t, in, out, rounds)
	// A raw remote PTY takes no EOF from a closed stdin: end ssh itself.
	ssh.Process.Kill()
	ssh.Wait()

	c, err := Start(Options{Transport: srv.Command(false, sidecarBin), Stderr: testLog{t}, Hello: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	term, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c", "stty raw -echo; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	ours := echoRounds(t, term, term, rounds)
	term.Close()

	// Throughput: the same file through ssh alone and through a terminal.
	start := time.Now()
	argv = srv.Command(false, "cat "+file)
	cat := exec.Command(argv[0], argv[1:]...)
	cat.Stdout = io.Discard
	if err := cat.Run(); err != nil {
		t.Fatal(err)
	}
	sshRate := float64(len(data)) / time.Since(start).Seconds()
	start = time.Now()
	term, err = c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c", "stty raw -echo; exec cat " + file}})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, term)
	termRate := float64(n) / time.Since(start).Seconds()

	p := func(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	t.Logf("echo p50: %v through the remote sidecar, %v ssh -tt cat (ratio %.2f)", p(ours, .5), p(floor, .5), float64(p(ours, .5))/float64(p(floor, .5)))
	t.Logf("echo p99: %v through the remote sidecar, %v ssh -tt cat (ratio %.2f)", p(ours, .99), p(floor, .99), float64(p(ours, .99))/float64(p(floor, .99)))
	t.Logf("throughput: %.0f MB/s through the remote sidecar (%d bytes), %.0f MB/s ssh cat (ratio %.2f)", termRate/1e6, n, sshRate/1e6, termRate/sshRate)
	fmt.Fprintf(os.Stderr, "figures: echo p50 %.2f p99 %.2f throughput %.2f\n",
		float64(p(ours, .5))/float64(p(floor, .5)), float64(p(ours, .99))/float64(p(floor, .99)), termRate/sshRate)
}

// echoRounds sends one byte at a time and times its echo.
func echoRounds(t *testing.T, w io.Writer, r io.Reader, rounds int) []time.Duration {
	t.Helper()
	buf := make([]byte, 64)
	var d []time.Duration
	for i := 0; i < rounds+20; i++ {
		key := []byte{'a' + byte(i%26)}
		start := time.Now()
		if _, err := w.Write(key); err != nil {
			t.Fatal(err)
		}
		for {
			n, err := r.Read(buf)
			if err != nil {
				t.Fatalf("echo round %d: %v", i, err)
			}
			if bytes.IndexByte(buf[:n], key[0]) >= 0 {
				break
			}
		}
		if i >= 20 { // the first rounds warm the connection up
			d = append(d, time.Since(start))
		}
	}
	slices.Sort(d)
	return d
}

// TestResumeFigures measures a resume over ssh to 127.0.0.1: from the ssh
// client's SIGKILL to the first byte of a flooding terminal that comes
// through the new connection, against `ssh host true` (a login, which is
// most of it) in the same run. The keepalive is not involved: a killed
// ssh ends the stream at once, and a hung one is noticed within
// ReconnectPolicy.DetectionBound on top of this. Runs only when
// PTYPLEX_REMOTE_FIGURES is set.
func TestResumeFigures(t *testing.T) {
	if os.Getenv("PTYPLEX_REMOTE_FIGURES") == "" {
		t.Skip("set PTYPLEX_REMOTE_FIGURES=1 to measure")
	}
	const rounds = 10
	rig := newResumeRig(t, "figures")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	stop := filepath.Join(rig.dir, "stop")
	term, err := c.Open(ctx, OpenOptions{ID: "flood", Cmd: "sh", Args: []string{"-c", floodScript(0, stop)}, Detached: "park"})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(term)
	var resume, login []time.Duration
	for i := 0; i < rounds; i++ {
		at := out.len()
		out.until(t, "the flood", func(b []byte, _ error) bool { return len(b) > at })
		killed := time.Now()
		syscall.Kill(c.Pid(), syscall.SIGKILL)
		ev.next(t, EventDisconnected, i+1)
		// Everything the old connection carried has been received now.
		_, recv := term.win.offsets()
		out.until(t, "the first resumed byte", func(b []byte, _ error) bool { return uint64(len(b)) > recv })
		resume = append(resume, time.Since(killed))

		argv := rig.srv.Command(false, "true")
		start := time.Now()
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			t.Fatal(err)
		}
		login = append(login, time.Since(start))
	}
	os.WriteFile(stop, nil, 0o600)
	slices.Sort(resume)
	slices.Sort(login)
	t.Logf("resume, SIGKILL of ssh to the first resumed byte: p50 %v, max %v; ssh host true: p50 %v, max %v",
		resume[rounds/2].Round(time.Millisecond), resume[rounds-1].Round(time.Millisecond),
		login[rounds/2].Round(time.Millisecond), login[rounds-1].Round(time.Millisecond))
	fmt.Fprintf(os.Stderr, "figures: resume p50 %.0f ms, ssh login p50 %.0f ms\n",
		float64(resume[rounds/2].Microseconds())/1000, float64(login[rounds/2].Microseconds())/1000)
}
