//go:build unix

package session

import (
	"bufio"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/session/wire"
)

// The Python implementation's INPUT, {"data":{"data":TEXT}}, types TEXT.
func TestNestedInputTypes(t *testing.T) {
	d := benchDaemon(t, Config{Command: []string{"cat"}})
	sock := d.SocketPath()
	line, err := bufio.NewReader(sendRaw(t, sock, `{"type":"INPUT","data":{"data":"nested-input\r"}}`)).ReadString('\n')
	if err != nil || !strings.Contains(line, `"status":"ok"`) {
		t.Fatalf("nested INPUT answered %q (%v)", line, err)
	}
	untilState(t, d, func(st *state) bool { return strings.Contains(st.scr.Line(1, false), "nested-input") })
	r, err := wire.Call(sock, map[string]any{"type": "INPUT", "data": map[string]any{"text": "x"}})
	if err != nil || r.Status != "error" || !strings.Contains(r.Error, "data") {
		t.Errorf("nested INPUT without its text: %+v %v", r, err)
	}
}

// A Plain session's program gets TERM=ansi, as with interminai's custom
// emulator, unless the caller sets TERM; others get xterm-256color.
func TestPlainSessionTerm(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Plain: true}, "TERM=ansi."},
		{Config{Plain: true, Env: map[string]string{"TERM": "vt100"}}, "TERM=vt100."},
		{Config{}, "TERM=xterm-256color."},
	} {
		tc.cfg.Command = []string{"sh", "-c", `echo "TERM=$TERM."; exec cat`}
		d := benchDaemon(t, tc.cfg)
		untilState(t, d, func(st *state) bool { return strings.Contains(st.scr.Line(1, false), ".") })
		d.st.mu.Lock()
		got := d.st.scr.Line(1, false)
		d.st.mu.Unlock()
		if !strings.Contains(got, tc.want) {
			t.Errorf("Plain %v, Env %v: the program saw %q, want %q", tc.cfg.Plain, tc.cfg.Env, got, tc.want)
		}
	}
}
