//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/proto"
)

// sidecarHost speaks the frame protocol to a ptyplex-sidecar process the way
// an efficient host does, through the client package's frame level: one
// reader goroutine that decodes frames in place in a 1 MiB read buffer and
// hands each to a callback, so a 64 KiB OUTPUT frame is neither copied nor
// allocated on its way to the measurement.
//
// It uses client.Stream rather than client.Client because the figures are
// the sidecar's, not the Go client's: Client allocates every OUTPUT body
// (its receive window keeps them) and copies every byte again into the
// caller's Read buffer. One raw terminal flooding 64 MiB, medians of 7
// alternating runs on 2 loaded CPUs, two such runs: 124 and 85 MB/s
// through a Stream, 109 and 83 through a Client terminal opened Raw, 103
// and 64 through one with the default credit window.
type sidecarHost struct {
	s    *client.Stream
	pong chan struct{} // a PONG arrived (see ready)
}

// handler is the Stream's Handle for h: PONGs answer ready, every other
// frame goes to onFrame.
func (h *sidecarHost) handler(onFrame func(proto.Frame)) func(proto.Frame) error {
	h.pong = make(chan struct{}, 1)
	return func(f proto.Frame) error {
		if f.Type == proto.TypePong {
			select {
			case h.pong <- struct{}{}:
			default:
			}
			return nil
		}
		onFrame(f)
		return nil
	}
}

// ready sends a PING and waits for its PONG: the server behind h (a
// sidecar, or a persistent server behind its bridge) has started and reads
// its frames. The throughput rows start their clock here, since the plain
// reads they compare with start no server: a process's start (the Go
// runtime, the watchdog, a bridge dialling or starting its server) is the
// OPEN latency rows' subject, not a flood's.
func (h *sidecarHost) ready() error {
	if err := h.s.Send(proto.AppendFrame(nil, proto.TypePing, []byte(`{}`))); err != nil {
		return err
	}
	select {
	case <-h.pong:
		return nil
	case <-h.readEnded():
		return fmt.Errorf("output ended before the PONG: %v", h.readErr())
	case <-time.After(time.Minute):
		return fmt.Errorf("no PONG within a minute")
	}
}

// startSidecar runs bin and calls onFrame for every frame it writes, from
// a single goroutine, until its stdout ends. Bodies are valid only during
// the call.
func startSidecar(bin string, onFrame func(proto.Frame)) (*sidecarHost, error) {
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	if *sidecarEnv != "" {
		cmd.Env = append(os.Environ(), strings.Fields(*sidecarEnv)...)
	}
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

func (h *sidecarHost) pid() int { return h.s.Process().Pid }

// readEnded is closed once the sidecar's stdout has ended (readErr says
// why), as the sidecar does only when it exits or fails.
func (h *sidecarHost) readEnded() <-chan struct{} { return h.s.ReadDone() }
func (h *sidecarHost) readErr() error             { return h.s.ReadErr() }

func (h *sidecarHost) open(id string, cmd string, args ...string) error {
	return h.s.SendJSON(proto.TypeOpen, proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: cmd, Args: args})
}

func (h *sidecarHost) close(id string) error {
	return h.s.SendJSON(proto.TypeClose, proto.Close{TerminalID: id})
}

func (h *sidecarHost) input(id string, data []byte) error {
	return h.s.Send(proto.AppendDataFrame(nil, proto.TypeInput, id, data))
}

// stop ends the sidecar by closing its stdin and waits for it.
func (h *sidecarHost) stop() error {
	h.s.CloseInput()
	if err := h.s.ReadErr(); err != nil {
		return err
	}
	return h.s.WaitErr()
}

// rssKiB reads a process's resident set size from /proc.
func rssKiB(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// exitOK reports a failure inside an EXIT body as an error.
func exitOK(body []byte) error {
	e, err := parseExit(body)
	if err != nil {
		return err
	}
	if e.ExitCode == nil || *e.ExitCode != 0 {
		return fmt.Errorf("terminal %s ended badly: %s", e.TerminalID, body)
	}
	return nil
}

func parseExit(body []byte) (proto.Exit, error) {
	var e proto.Exit
	if err := json.Unmarshal(body, &e); err != nil {
		return e, fmt.Errorf("bad EXIT %q: %w", body, err)
	}
	return e, nil
}

// idOf extracts the terminalId of a control body.
func idOf(body []byte) string {
	var v struct {
		TerminalID string `json:"terminalId"`
	}
	json.Unmarshal(body, &v)
	return v.TerminalID
}
