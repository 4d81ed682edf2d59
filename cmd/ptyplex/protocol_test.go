//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestProtocolEnvelopes(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	for _, tc := range []struct{ req, want string }{
		{`{"type":"INPUT","data":"x"}`, `{"status":"ok"}`},
		{`{"type":"BOGUS"}`, `{"status":"error","error":"Unknown command: BOGUS"}`},
		{`{"data":1}`, `{"status":"error","error":"Invalid request: missing 'type' field"}`},
		{`{"type":"STATUS"}`, `{"status":"ok","data":{"running":true,"size":{"rows":24,"cols":80},"scrollback_available":0,"scrollback_capacity":10000}}`},
		{`{"type":"KILL","signal":"NOTASIGNAL"}`, `{"status":"error","error":"Invalid signal: NOTASIGNAL"}`},
		{`{"type":"RESIZE","cols":100,"rows":30}`, `{"status":"ok","data":{"size":{"rows":30,"cols":100},"cols":100,"rows":30}}`},
	} {
		if got := rawExchange(t, s.sock, tc.req+"\n"); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.req, got, tc.want)
		}
	}
	// The echo may still be on its way on a loaded machine; reading the
	// screen leaves the activity flag alone.
	s.waitText("x")
	st := rawCall(t, s.sock, `{"type":"STATUS","activity":true}`)
	if d := st["data"].(map[string]any); d["activity"] != true {
		t.Errorf("activity after cat echoed x: %v", st)
	}
	if got := rawExchange(t, s.sock, `{"type":"KILL","signal":9}`+"\n"); got != `{"status":"ok","data":{"signal_sent":"SIGKILL"}}` {
		t.Errorf("KILL with a numeric signal: %s", got)
	}
	w := rawExchange(t, s.sock, `{"type":"WAIT"}`+"\n")
	if w != `{"status":"ok","data":{"exit_code":137}}` {
		t.Errorf("WAIT after SIGKILL: %s", w)
	}
	w = rawExchange(t, s.sock, `{"type":"WAIT","activity":true}`+"\n")
	if !strings.Contains(w, `"exited":true`) {
		t.Errorf("activity WAIT after exit: %s", w)
	}
	st = rawCall(t, s.sock, `{"type":"STATUS"}`)
	if d := st["data"].(map[string]any); d["running"] != false || d["exit_code"] != float64(137) {
		t.Errorf("STATUS after exit: %v", st)
	}
}

func TestProtocolBadRequests(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	for _, tc := range []struct{ req, want string }{
		{`not json`, "Invalid request"},
		{``, "Invalid request"},
		{`[1,2]`, "JSON object"},
		{`"STATUS"`, "JSON object"},
		{`{"type":5}`, "'type'"},
		{`{"type":"status"}`, "Unknown command: status"},
		{`{"type":"STATUS","activity":"yes"}`, "'activity'"},
		{`{"type":"INPUT","data":5}`, "'data'"},
		{`{"type":"INPUT"}`, "'data'"},
		{`{"type":"OUTPUT","from":true}`, "'from'"},
		{`{"type":"OUTPUT","to":"-"}`, "'to'"},
		{`{"type":"OUTPUT","format":"xml"}`, "format"},
		{`{"type":"KILL","signal":[1]}`, "'signal'"},
		{`{"type":"KILL","signal":"9999"}`, "Invalid signal"},
		{`{"type":"RESIZE","cols":0,"rows":5}`, "Invalid size"},
		{`{"type":"RESIZE","cols":"80","rows":5}`, "'cols'"},
		{`{"type":"WAIT","timeout_ms":"soon"}`, "'timeout_ms'"},
		{`{"type":"DEBUG","data":5}`, "'data'"},
	} {
		m := rawCall(t, s.sock, tc.req)
		if m["status"] != "error" || !strings.Contains(fmt.Sprint(m["error"]), tc.want) {
			t.Errorf("%q: got %v, want an error mentioning %q", tc.req, m, tc.want)
		}
	}
	// Still serving.
	if m := rawCall(t, s.sock, `{"type":"STATUS"}`); m["status"] != "ok" {
		t.Errorf("STATUS after bad requests: %v", m)
	}
}

func TestProtocolRobustness(t *testing.T) {
	t.Parallel()
	s := shell(t)
	s.input("seq 1 3000\r")
	s.waitText("\n3000\n")

	// Half a request, then hang-up.
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte(`{"type":"STA`))
	c.Close()

	// A client that dies before reading a large answer.
	c, _ = net.Dial("unix", s.sock)
	c.Write([]byte(`{"type":"OUTPUT","from":"-","format":"ansi"}` + "\n"))
	c.Close()

	// A request without its newline, then shutdown(SHUT_WR): still answered.
	c, _ = net.Dial("unix", s.sock)
	c.Write([]byte(`{"type":"STATUS"}`))
	c.(*net.UnixConn).CloseWrite()
	line, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || !strings.HasPrefix(line, `{"status":"ok"`) {
		t.Errorf("half-closed request: %q, %v", line, err)
	}

	// Over the 10 MB limit: an error naming the limit, without buffering it all.
	c, _ = net.Dial("unix", s.sock)
	go func() {
		chunk := []byte(strings.Repeat("a", 1<<20))
		for i := 0; i < 12; i++ {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(deadline))
	line, err = bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || !strings.Contains(line, `"status":"error"`) || !strings.Contains(line, "10 MB") {
		t.Errorf("oversized request: %q, %v", line, err)
	}

	m := rawCall(t, s.sock, `{"type":"OUTPUT","from":"-"}`)
	d := m["data"].(map[string]any)
	if d["from"] != -d["scrollback_available"].(float64) || d["to"] != float64(24) || d["scrollback_capacity"] != float64(10000) {
		t.Errorf("OUTPUT from \"-\": from %v to %v available %v", d["from"], d["to"], d["scrollback_available"])
	}
	m = rawCall(t, s.sock, `{"type":"OUTPUT","from":-100000,"to":100000}`)
	d = m["data"].(map[string]any)
	if d["from"] != -d["scrollback_available"].(float64) || d["to"] != float64(24) {
		t.Errorf("clamping: from %v to %v", d["from"], d["to"])
	}
	m = rawCall(t, s.sock, `{"type":"OUTPUT"}`)
	d = m["data"].(map[string]any)
	cur := d["cursor"].(map[string]any)
	if d["from"] != float64(1) || d["to"] != float64(24) || cur["row"] != float64(23) || cur["col"] != float64(2) {
		t.Errorf("default OUTPUT: from %v to %v cursor %v", d["from"], d["to"], cur)
	}
	m = rawCall(t, s.sock, `{"type":"OUTPUT","from":-3,"to":0}`)
	if d = m["data"].(map[string]any); d["screen"] != "2975\n2976\n2977\n" || d["from"] != float64(-3) || d["to"] != float64(0) {
		t.Errorf("OUTPUT -3..0: %q from %v to %v", d["screen"], d["from"], d["to"])
	}
}

func TestWaitEndsWhenClientHangsUp(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte(`{"type":"WAIT"}` + "\n")) // blocks: cat runs until stop
	// Other requests no longer queue behind a WAIT (session/async_test.go
	// checks that the abandoned WAIT itself ends); the daemon must go on
	// serving after its client left.
	done := make(chan map[string]any, 1)
	go func() { done <- rawCall(t, s.sock, `{"type":"STATUS"}`) }()
	c.Close()
	select {
	case m := <-done:
		if m["status"] != "ok" {
			t.Errorf("STATUS after the WAIT's client left: %v", m)
		}
	case <-time.After(deadline):
		t.Fatal("daemon still blocked in the abandoned WAIT")
	}
}

func TestConcurrentClientsWhileWaiting(t *testing.T) {
	t.Parallel()
	s, feed := fifoSession(t)
	waitDone := make(chan map[string]any, 1)
	go func() { waitDone <- rawCall(t, s.sock, `{"type":"WAIT","activity":true}`) }()
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req := `{"type":"STATUS"}`
			if i%2 == 1 {
				req = `{"type":"OUTPUT","format":"ansi"}`
			}
			m := rawCall(t, s.sock, req)
			if m["status"] != "ok" {
				errs <- fmt.Sprintf("%s: %v", req, m)
			}
		}(i)
	}
	feed.WriteString("wake up\n")
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if m := <-waitDone; m["status"] != "ok" || m["data"].(map[string]any)["activity"] != true {
		t.Errorf("WAIT: %v", m)
	}
}

func TestRequestsRunInArrivalOrder(t *testing.T) {
	t.Parallel()
	s := shell(t)
	// Each INPUT is answered before the next request starts, so a script
	// that sends keys and then reads the screen sees them processed in
	// order even when the program is slow to echo.
	for i := 0; i < 5; i++ {
		s.input(fmt.Sprintf("echo order-%d\r", i))
	}
	scr := s.waitText("\norder-4\n")
	last := -1
	for i := 0; i < 5; i++ {
		idx := strings.Index(scr, fmt.Sprintf("\norder-%d\n", i))
		if idx < last {
			t.Fatalf("out of order:\n%s", scr)
		}
		last = idx
	}
}

func TestOtherUsersAreRefused(t *testing.T) {
	t.Parallel()
	requireRoot(t) // to act as another user
	// A world-accessible directory, socket and binary: only SO_PEERCRED
	// stands between another user and the session.
	dir, err := os.MkdirTemp("/tmp", "ptyplex-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // after the session's own cleanup
	os.Chmod(dir, 0o777)
	nobodyBin := filepath.Join(dir, "ptyplex")
	copyExecutable(t, bin, nobodyBin)
	sock := filepath.Join(dir, "shared.sock")
	s := start(t, "--socket", sock, "--", "cat")
	os.Chmod(sock, 0o777)
	cmd := exec.Command(nobodyBin, "status", "--socket", s.sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = append(os.Environ(), "GORACE=") // nobody cannot write our race log directory
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("another user's request was not refused: %v\n%s", err, out)
	}
	s.ok("status") // and we are still served
}

func TestCLIConventions(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	for name := range commands {
		// Every subcommand's help: on stdout, exit 0, -h and -help too.
		for _, flag := range []string{"--help", "-help", "-h"} {
			h := ptyplex(t, "", name, flag)
			if h.code != 0 || !strings.Contains(h.stdout, "Usage: ptyplex "+name) {
				t.Errorf("%s %s: %v", name, flag, h)
			}
		}
		if name == "start" || name == "list" || name == "remote" || name == "replay" || name == "mcp" { // they take no --socket
			continue
		}
		r := ptyplex(t, "", name)
		if r.code == 0 || !strings.Contains(r.stderr, "--socket") {
			t.Errorf("%s without --socket: %v", name, r)
		}
		r = ptyplex(t, "", name, "--socket", "/nonexistent/dir/sock")
		if name == "resize" { // --size is required too
			r = ptyplex(t, "", name, "--socket", "/nonexistent/dir/sock", "--size", "10x10")
		}
		if name == "run" { // so is the command
			r = ptyplex(t, "", name, "--socket", "/nonexistent/dir/sock", "--", "true")
		}
		if r.code != 1 || !strings.Contains(r.stderr, "No such file") {
			t.Errorf("%s with a missing socket: %v", name, r)
		}
	}
	// A daemon error answer: "Error: <message>", exit 1.
	r := s.run("kill", "--signal", "9999")
	if r.code != 1 || r.stderr != "Error: Invalid signal: 9999\n" {
		t.Errorf("error answer: %v", r)
	}
	// -flag and --flag are the same.
	if a, b := s.ok("output", "-no-color"), s.ok("output", "--no-color"); a != b {
		t.Errorf("-no-color and --no-color differ")
	}
}

// TestSlowReaderHoldsUpNobody: a client that asks for a long answer (the
// whole scrollback, more than the socket buffers hold) and does not read
// it held up every later request for the 10 s the daemon gives a client
// to read; now the rest of its answer is written aside, and it still gets
// all of it when it reads.
func TestSlowReaderHoldsUpNobody(t *testing.T) {
	t.Parallel()
	const lines = 10000
	prog := fmt.Sprintf(`awk 'BEGIN { s = sprintf("%%300s", ""); gsub(/ /, "y", s); for (i = 0; i < %d; i++) print s; print "DONE" }'; exec cat`, lines)
	s := start(t, "--size", "300x10", "--", "sh", "-c", prog)
	s.waitText("DONE")

	slow, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte(`{"type":"OUTPUT","from":"-"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	// Our STATUS comes after the OUTPUT: it is queued behind it.
	begin := time.Now()
	if m := rawCall(t, s.sock, `{"type":"STATUS"}`); m["status"] != "ok" {
		t.Fatalf("STATUS: %v", m)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("STATUS behind a client that does not read its answer took %v", took)
	}
	slow.SetDeadline(time.Now().Add(3 * deadline))
	line, err := bufio.NewReaderSize(slow, 1<<20).ReadString('\n')
	if err != nil {
		t.Fatalf("the slow client's answer: %v (%d bytes)", err, len(line))
	}
	var a struct {
		Data struct {
			Screen string `json:"screen"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("the slow client's answer (%d bytes): %v", len(line), err)
	}
	if n := strings.Count(a.Data.Screen, strings.Repeat("y", 300)+"\n"); n < lines-10 {
		t.Errorf("the slow client's answer holds %d full lines, want about %d", n, lines)
	}
}

// TestRequestsDuringShutdownAreAnswered: while STOP waits for a program
// that ignores SIGTERM and SIGHUP (2 s until SIGKILL), a request is
// answered "Daemon is shutting down", as PROTOCOL.md says; the socket
// used to be closed at once, so it was refused as if the daemon were
// gone.
func TestRequestsDuringShutdownAreAnswered(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", `trap "" TERM HUP; echo ready; while :; do read x; done`)
	s.waitText("ready")
	stopped := make(chan string, 1)
	go func() {
		r := ptyplex(t, "", "stop", "--socket", s.sock)
		stopped <- r.String()
	}()
	for end := time.Now().Add(deadline); ; {
		if time.Now().After(end) {
			t.Fatal("no request was answered 'Daemon is shutting down' while STOP ran")
		}
		c, err := net.Dial("unix", s.sock)
		if err != nil {
			t.Fatalf("connecting while STOP runs: %v", err)
		}
		c.SetDeadline(time.Now().Add(3 * deadline))
		c.Write([]byte(`{"type":"STATUS"}` + "\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if line == `{"status":"error","error":"Daemon is shutting down"}`+"\n" {
			break
		}
		if !strings.HasPrefix(line, `{"status":"ok"`) {
			t.Fatalf("STATUS while STOP runs: %q", line)
		}
	}
	if r := <-stopped; !strings.HasPrefix(r, "exit 0") {
		t.Errorf("stop: %s", r)
	}
}
