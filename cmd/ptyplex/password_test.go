//go:build unix

package main

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
)

func TestInputPassword(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	s := start(t, "--", "python3", "-c",
		"import getpass; p = getpass.getpass('Secret: '); print('len', len(p), 'ok' if p == 'hunter2' else 'bad')")
	s.waitText("Secret:")
	// getpass turned echo off in the session's terminal; debug shows it.
	s.waitFor("echo off", func(string) bool {
		for _, f := range strings.Fields(flagsLine(s.ok("debug"))) {
			if f == "ECHO" {
				return false
			}
		}
		return true
	})

	// The CLI reads the secret from its own controlling terminal: give it one.
	cli, err := ptyhost.Start(ptyhost.Config{Cmd: bin, Args: []string{"input", "--socket", s.sock, "--password"}, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	seen := make(chan string, 64)
	go func() {
		defer close(seen)
		buf := make([]byte, 4096)
		for {
			n, err := cli.Read(buf)
			if n > 0 {
				seen <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	var shown strings.Builder
	timeout := time.After(deadline)
	const guide = "Type your secret or password and press Enter."
	for !strings.Contains(shown.String(), guide) || !strings.Contains(shown.String(), "Secret:") {
		select {
		case chunk, ok := <-seen:
			if !ok {
				t.Fatalf("CLI ended before asking for the password: %q", shown.String())
			}
			shown.WriteString(chunk)
		case <-timeout:
			t.Fatalf("CLI never asked for the password: %q", shown.String())
		}
	}
	// The program's prompt comes after the guidance, as interminai shows it.
	if strings.Index(shown.String(), "Secret:") < strings.Index(shown.String(), guide) {
		t.Errorf("the program's prompt came before the guidance: %q", shown.String())
	}
	if _, err := cli.Write([]byte("hunter2\r")); err != nil {
		t.Fatal(err)
	}
	if err := cli.WaitExit(); err != nil {
		t.Fatal(err)
	}
	st, _ := cli.Reap()
	for chunk := range seen {
		shown.WriteString(chunk)
	}
	if st.Code != 0 {
		t.Fatalf("input --password exited %d: %q", st.Code, shown.String())
	}
	if strings.Contains(shown.String(), "hunter2") {
		t.Errorf("the password was echoed: %q", shown.String())
	}
	s.waitText("len 7 ok")
}

func TestInputPasswordWithoutTerminal(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	cmd := exec.Command(bin, "input", "--socket", s.sock, "--password")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Stdin = strings.NewReader("not-a-terminal\n")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v (stderr %q)", err, stderr.String())
	}
	if msg := strings.ToLower(stderr.String()); !strings.Contains(msg, "terminal") || !strings.Contains(msg, "password") {
		t.Errorf("error should mention the terminal and the password: %q", stderr.String())
	}
	if h := ok(t, "input", "--help"); !strings.Contains(strings.ToLower(h), "echo disabled") && !strings.Contains(strings.ToLower(h), "echo is disabled") {
		t.Errorf("input --help does not say echo is disabled:\n%s", h)
	}
}

func flagsLine(debug string) string {
	for _, l := range strings.Split(debug, "\n") {
		if f, ok := strings.CutPrefix(l, "  Flags:"); ok {
			return f
		}
	}
	return ""
}
