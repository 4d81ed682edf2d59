package client

import (
	"context"
	"io"
	"strings"
	"testing"
)

// OPEN is JSON, and encoding/json carries a byte outside a UTF-8
// character as U+FFFD. An argument "a\xffb" used to reach the child as
// "a\uFFFDb", an argument nobody named (the sidecar refuses such strings,
// but never saw this one as it was). Open now refuses it before sending;
// a real U+FFFD is a character like any other.
func TestOpenRefusesWhatJSONWouldChange(t *testing.T) {
	c := startClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	for _, tc := range []struct {
		o    OpenOptions
		want string
	}{
		{OpenOptions{Cmd: "echo", Args: []string{"ok", "a\xffb"}}, "args[1] is not valid UTF-8 (byte 0xff at offset 1)"},
		{OpenOptions{Cmd: "ech\xe2\x82"}, "cmd is not valid UTF-8 (byte 0xe2 at offset 3)"},
		{OpenOptions{Cmd: "echo", Dir: "/tmp/\xc3"}, "cwd is not valid UTF-8 (byte 0xc3 at offset 5)"},
		{OpenOptions{Cmd: "cmd.exe", CommandLine: "/c \xfe"}, "commandLine is not valid UTF-8 (byte 0xfe at offset 3)"},
	} {
		term, err := c.Open(ctx, tc.o)
		if err == nil {
			out, _ := io.ReadAll(term)
			t.Errorf("Open(%+q) started a child, which printed %q; want it refused", tc.o.Args, out)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open: %v; want it to say %q", err, tc.want)
		}
	}
	term := open(t, c, OpenOptions{Cmd: "echo", Args: []string{"a\uFFFDb é"}})
	out, err := io.ReadAll(term)
	if err != nil || string(out) != "a\uFFFDb é\r\n" {
		t.Errorf("valid UTF-8 with U+FFFD: %q, %v", out, err)
	}
}
