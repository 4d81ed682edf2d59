//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
)

// Answers while detached (sidecar/persist/answers.go): a program that
// queries its terminal with no host attached is answered by the server.
// Each row's baseline is the same program with a host attached whose
// emulator (a screen.Screen, as xterm.js would) answers through INPUT,
// in the same pair.

// answerRows adds the rows of answers while detached.
func answerRows(t *table, filter *regexp.Regexp, tmp string) {
	if filter.MatchString("persist answers vim") {
		vim, err := exec.LookPath("vim")
		if err != nil {
			fmt.Fprintf(os.Stderr, "persist answers vim: no vim here (%v): row left out\n", err)
		} else {
			vimRow(t, tmp, vim)
		}
	}
	if filter.MatchString("persist answers da1") {
		s := measure("persist answers da1", func() (float64, float64, error) {
			att, err := da1RoundTrip(*sidecarBin, tmp, false)
			if err != nil {
				return 0, 0, err
			}
			det, err := da1RoundTrip(*sidecarBin, tmp, true)
			return att, det, err
		})
		t.add(row{name: "DA1 round trip with no holder, median of 50 in a run (ms; baseline: attached, the host's emulator answers)",
			unit: "%.2f", scale: 1, s: s, maxValue: ptr(10.0)})
	}
}

// vimRow measures vim's start-up, detached against attached.
func vimRow(t *table, tmp, vim string) {
	s := measure("persist answers vim", func() (float64, float64, error) {
		// vim sends its queries (two CPRs, DA2, OSC 10 and 11) as
		// it draws its first screen; the DA2 answer fires
		// TermResponse, and it asks DECRQM for the cursor's blink.
		// It quits 50 ms after the DA2 answer: had an answer not
		// come by then, its exit would wait 100 ms for it.
		args := []string{"-u", "NONE", "-i", "NONE", "-N", "--cmd", `au TermResponse * call timer_start(50, {-> execute("qa!")})`}
		att, err := answeredRun(*sidecarBin, tmp, false, vim, args...)
		if err != nil {
			return 0, 0, err
		}
		det, err := answeredRun(*sidecarBin, tmp, true, vim, args...)
		return att, det, err
	})
	t.add(row{name: "vim start-up in a --persist terminal, detached: the server answers (ms from OPEN until vim quits, 50 ms after its DA2 answer; baseline: attached, the host's emulator answers)",
		unit: "%.1f", scale: 1, s: s, maxRatio: ptr(1.1)})
}

// answeringHost is a bridge host with one terminal, "a": attached, its
// emulator answers the program's queries as INPUT; detached (DETACH
// sent with the OPEN), it only lists.
type answeringHost struct {
	mu     sync.Mutex
	h      *sidecarHost
	sc     *screen.Screen
	listed chan proto.Listed
}

func startAnsweringHost(bin string, env []string) (*answeringHost, error) {
	a := &answeringHost{sc: screen.New(80, 24, screen.Options{Scrollback: -1, Version: "bench(1)"}),
		listed: make(chan proto.Listed, 1)}
	h, err := startBridge(bin, env, a.onFrame)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.h = h
	a.mu.Unlock()
	return a, nil
}

func (a *answeringHost) onFrame(f proto.Frame) {
	switch f.Type {
	case proto.TypeOutput:
		id, data, err := proto.ParseData(f.Body)
		if err != nil {
			return
		}
		a.mu.Lock()
		a.sc.Write(data)
		r := a.sc.TakeReplies()
		h := a.h
		a.mu.Unlock()
		if len(r) > 0 {
			h.input(id, r)
		}
	case proto.TypeListed:
		var l proto.Listed
		if json.Unmarshal(f.Body, &l) == nil {
			a.listed <- l
		}
	}
}

// waitEnd waits for terminal a's end, asking LIST every millisecond in
// both cases, so that neither is timed more finely than the other: an
// exited terminal is listed as exited (detached) or, once its EXIT was
// sent (attached), no more.
func (a *answeringHost) waitEnd() error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		a.h.s.SendJSON(proto.TypeList, struct{}{})
		l := <-a.listed
		ended := true
		for _, e := range l.Terminals {
			if e.TerminalID == "a" && !e.Exited {
				ended = false
			}
		}
		if ended {
			return nil
		}
	}
	return fmt.Errorf("terminal a did not end within a minute")
}

// answeredRun runs cmd in a fresh server's terminal, attached or
// detached, and returns the ms from the OPEN to its end.
func answeredRun(bin, tmp string, detached bool, cmd string, args ...string) (float64, error) {
	env, _ := persistEnvFor(tmp)
	defer stopServer(bin, env)
	a, err := startAnsweringHost(bin, env)
	if err != nil {
		return 0, err
	}
	defer a.h.stop()
	// The server must be up before the clock starts: a LIST answered.
	a.h.s.SendJSON(proto.TypeList, struct{}{})
	<-a.listed
	open := proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: cmd, Args: args}))
	if detached {
		// In the same write: the server detaches before the program
		// has started.
		open = proto.AppendFrame(open, proto.TypeDetach, proto.Marshal(map[string]string{"terminalId": "a"}))
	}
	t0 := time.Now()
	if err := a.h.s.Send(open); err != nil {
		return 0, err
	}
	if err := a.waitEnd(); err != nil {
		return 0, err
	}
	return time.Since(t0).Seconds() * 1000, nil
}

// da1RoundTrip runs a bash loop that sends DA1 and reads the answer 50
// times, timing each with $EPOCHREALTIME (no process started in the
// loop), and returns the median in ms.
func da1RoundTrip(bin, tmp string, detached bool) (float64, error) {
	out := filepath.Join(tmp, fmt.Sprint("da1-", persistSeq.Add(1)))
	defer os.Remove(out)
	script := `exec 3>` + out + `; stty raw -echo; sleep 0.05; for i in $(seq 50); do s=$EPOCHREALTIME; printf '\033[c';` +
		` IFS= read -r -d c a; e=$EPOCHREALTIME; printf '%s %s\n' "$s" "$e" >&3; done`
	if _, err := answeredRun(bin, tmp, detached, "/bin/bash", "-c", script); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	var ms []float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return 0, fmt.Errorf("DA1 timings: bad line %q", line)
		}
		s, err1 := strconv.ParseFloat(strings.Replace(f[0], ",", ".", 1), 64)
		e, err2 := strconv.ParseFloat(strings.Replace(f[1], ",", ".", 1), 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("DA1 timings: bad line %q", line)
		}
		ms = append(ms, (e-s)*1000)
	}
	if len(ms) != 50 {
		return 0, fmt.Errorf("DA1 timings: %d of 50", len(ms))
	}
	sort.Float64s(ms)
	return ms[len(ms)/2], nil
}
