//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"testing"
)

// serveAnswers listens on a socket that answers each request type with a
// fixed data object, as a daemon that implements the seed protocol and
// nothing more (or interminai's, for DEBUG's termios error) would.
func serveAnswers(t *testing.T, answers map[string]string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "minimal.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var req struct {
				Type string `json:"type"`
			}
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			json.Unmarshal(line, &req)
			c.Write([]byte(`{"status":"ok","data":` + answers[req.Type] + "}\n"))
			c.Close()
		}
	}()
	return sock
}

// TestCLIAgainstAMinimalDaemon: status and debug print what the daemon
// answered and leave out what it did not, as interminai's client does: no
// "Size: 0x0" for a STATUS without a size, no empty Termios lines for a
// DEBUG without termios, interminai's "Termios: <error>" when it could not
// read them, and "?" for a value it left out.
func TestCLIAgainstAMinimalDaemon(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, typ, answer string
		args              []string
		want              string
	}{
		{"status without size", "STATUS", `{"running":true,"activity":false}`, []string{"status"},
			"Running: true\nActivity: false\nScrollback: 0/0\n"},
		{"debug without termios", "DEBUG", `{"unhandled":[],"dropped":0}`, []string{"debug"},
			"No unhandled escape sequences\n"},
		{"debug with termios error", "DEBUG", `{"unhandled":[],"dropped":0,"termios":{"error":"Failed to get termios: EIO"}}`, []string{"debug"},
			"No unhandled escape sequences\nTermios: Failed to get termios: EIO\n"},
		{"debug with a partial termios", "DEBUG", `{"unhandled":[],"dropped":0,"termios":{"mode":"raw","flags":[],"c_cc":{"VINTR":"^C"}}}`, []string{"debug"},
			"No unhandled escape sequences\nTermios:\n  Mode: raw\n  Hex: iflag=? oflag=? lflag=? cflag=?\n  c_cc: VINTR=^C VEOF=? VERASE=? VKILL=? VSUSP=? VQUIT=?\n"},
	} {
		sock := serveAnswers(t, map[string]string{c.typ: c.answer})
		r := ptyplex(t, "", append(c.args, "--socket", sock)...)
		if r.code != 0 || r.stdout != c.want {
			t.Errorf("%s: %v\nwant stdout:\n%s", c.name, r, c.want)
		}
	}
}
