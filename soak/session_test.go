package soak

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/stretchr/testify/require"
)

// TestSessionDaemonHostileClients throws garbage, half requests, 20 MB
// requests, clients that vanish in the middle of a WAIT and bursts of 50
// concurrent clients at a session daemon. It must answer every well-formed
// request correctly and stay up throughout.
func TestSessionDaemonHostileClients(t *testing.T) {
	bin, err := hosttest.Binary("./cmd/ptyplex")
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "s")
	out, err := exec.Command(bin, "start", "--socket", sock, "--", "cat").CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`PID: (\d+)`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	daemon, _ := strconv.Atoi(string(m[1]))
	t.Cleanup(func() {
		request(sock, `{"type":"STOP"}`)
		if !hosttest.WaitGone(daemon, 10*time.Second) {
			t.Errorf("daemon %d did not stop", daemon)
		}
	})
	rounds := size(1, 20)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		hostile := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
		for i := 0; i < 5; i++ {
			garbage := make([]byte, 1+rng.IntN(4096))
			for j := range garbage {
				garbage[j] = byte(rng.Uint32())
			}
			hostile(func() { raw(t, sock, append(bytes.ReplaceAll(garbage, []byte{'\n'}, nil), '\n'), true) })
			hostile(func() { raw(t, sock, []byte(`{"type":"OUTP`), true) })     // half, then shuts down writing
			hostile(func() { raw(t, sock, []byte(`{"type":"STATUS"`), false) }) // half, then vanishes
			hostile(func() { vanishMidWait(t, sock) })
		}
		hostile(func() {
			resp := rawAnswer(t, sock, bytes.Repeat([]byte("x"), 20<<20))
			require.Contains(t, resp, `"status":"error"`)
			require.Contains(t, resp, "exceeds")
		})
		// 50 well-formed clients at once, while the hostile ones run.
		marker := fmt.Sprintf("round-%d", round)
		answers := make(chan map[string]any, 50)
		for i := 0; i < 50; i++ {
			req := `{"type":"STATUS"}`
			if i%2 == 1 {
				req = `{"type":"OUTPUT","format":"ascii"}`
			}
			wg.Add(1)
			go func() { defer wg.Done(); answers <- mustOK(t, sock, req) }()
		}
		wg.Wait()
		close(answers)
		n := 0
		for a := range answers {
			n++
			require.Equal(t, "ok", a["status"], "%v", a)
		}
		require.Equal(t, 50, n)
		// The daemon still does its job: input reaches the program and its
		// echo reaches the screen.
		mustOK(t, sock, `{"type":"INPUT","data":"`+marker+`\r"}`)
		require.True(t, eventually(hostTimeout, func() bool {
			a := mustOK(t, sock, `{"type":"OUTPUT","format":"ascii"}`)
			d, _ := a["data"].(map[string]any)
			s, _ := d["screen"].(string)
			return strings.Count(s, marker) >= 2 // the tty's echo and cat's copy
		}), "input of round %d never showed on the screen", round)
		require.True(t, hosttest.Alive(daemon), "daemon died in round %d", round)
	}
}

// request sends one request line and returns the raw answer line.
func request(sock, line string) (string, error) {
	c, err := net.DialTimeout("unix", sock, hostTimeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hostTimeout))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func mustOK(t *testing.T, sock, line string) map[string]any {
	t.Helper()
	resp, err := request(sock, line)
	if err != nil {
		t.Errorf("%s: %v", line, err)
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(resp), &m); err != nil {
		t.Errorf("%s: answer %q is not JSON", line, resp)
	}
	if m["status"] != "ok" {
		t.Errorf("%s: %s", line, resp)
	}
	return m
}

// raw sends b; with shut it closes its sending side and reads the answer,
// which must be JSON if there is one; without it just hangs up.
func raw(t *testing.T, sock string, b []byte, shut bool) {
	c, err := net.DialTimeout("unix", sock, hostTimeout)
	if err != nil {
		t.Errorf("dial: %v", err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hostTimeout))
	c.Write(b)
	if !shut {
		return
	}
	c.(*net.UnixConn).CloseWrite()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil && line == "" {
		return // closing without an answer is fine for garbage
	}
	if !json.Valid([]byte(strings.TrimSpace(line))) {
		t.Errorf("answer to %q is not JSON: %q", b[:min(len(b), 40)], line)
	}
}

// rawAnswer writes b (possibly failing part-way: the daemon may stop
// reading) and returns whatever answer comes back.
func rawAnswer(t *testing.T, sock string, b []byte) string {
	c, err := net.DialTimeout("unix", sock, hostTimeout)
	if err != nil {
		t.Errorf("dial: %v", err)
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hostTimeout))
	go c.Write(b)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}

// vanishMidWait starts a WAIT for the program's exit, which does not come,
// sees that no answer arrives (the daemon is waiting), and hangs up.
func vanishMidWait(t *testing.T, sock string) {
	c, err := net.DialTimeout("unix", sock, hostTimeout)
	if err != nil {
		t.Errorf("dial: %v", err)
		return
	}
	defer c.Close()
	c.Write([]byte(`{"type":"WAIT"}` + "\n"))
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if line, err := bufio.NewReader(c).ReadString('\n'); err == nil {
		t.Errorf("WAIT for a running program answered at once: %s", line)
	}
}
