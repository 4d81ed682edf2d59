package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/ptyplex/ptyplex/proto"
)

// sidecarHost speaks the frame protocol to a ptyplex-sidecar process the way
// an efficient host does: one reader goroutine that decodes frames into a
// reused buffer and hands each to a callback, and a buffered writer for
// frames to the sidecar.
type sidecarHost struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	inMu sync.Mutex
	done chan error // the reader's end: nil at EOF
}

// startSidecar runs bin and calls onFrame for every frame it writes, from
// a single goroutine, until its stdout ends. Bodies are valid only during
// the call.
func startSidecar(bin string, onFrame func(proto.Frame)) (*sidecarHost, error) {
	h := &sidecarHost{cmd: exec.Command(bin), done: make(chan error, 1)}
	h.cmd.Stderr = os.Stderr
	if *sidecarEnv != "" {
		h.cmd.Env = append(os.Environ(), strings.Fields(*sidecarEnv)...)
	}
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		r := proto.NewReader(bufio.NewReaderSize(out, 1<<20))
		r.ReuseBuffer()
		for {
			f, err := r.ReadFrame()
			if err == io.EOF {
				h.done <- nil
				return
			}
			if err != nil {
				h.done <- err
				return
			}
			onFrame(f)
		}
	}()
	return h, nil
}

func (h *sidecarHost) pid() int { return h.cmd.Process.Pid }

func (h *sidecarHost) send(b []byte) error {
	h.inMu.Lock()
	defer h.inMu.Unlock()
	_, err := h.in.Write(b)
	return err
}

func (h *sidecarHost) open(id string, cmd string, args ...string) error {
	o := proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: cmd, Args: args}
	return h.send(proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(o)))
}

func (h *sidecarHost) close(id string) error {
	return h.send(proto.AppendFrame(nil, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: id})))
}

func (h *sidecarHost) input(id string, data []byte) error {
	return h.send(proto.AppendDataFrame(nil, proto.TypeInput, id, data))
}

// stop ends the sidecar by closing its stdin and waits for it.
func (h *sidecarHost) stop() error {
	h.in.Close()
	rerr := <-h.done
	werr := h.cmd.Wait()
	if rerr != nil {
		return rerr
	}
	return werr
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
