//go:build unix

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

// New refuses a configuration it cannot run, naming what is wrong, and
// fills in interminai's default size when none is given.
func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no command", Config{}, "the command argument is required"},
		{"empty program", Config{Command: []string{""}}, "the command argument is required"},
		{"zero columns", Config{Command: []string{"cat"}, Rows: 5}, "Invalid size: 0x5"},
		{"negative rows", Config{Command: []string{"cat"}, Cols: 10, Rows: -1}, "Invalid size: 10x-1"},
		{"too wide", Config{Command: []string{"cat"}, Cols: wire.MaxDim + 1, Rows: 5}, "Invalid size"},
		{"negative scrollback", Config{Command: []string{"cat"}, Scrollback: -1}, "invalid scrollback -1"},
		{"negative idle exit", Config{Command: []string{"cat"}, IdleExit: -time.Second}, "invalid idle exit -1s"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	cfg := Config{Command: []string{"cat"}}
	if err := cfg.validate(); err != nil || cfg.Cols != DefaultCols || cfg.Rows != DefaultRows {
		t.Errorf("no size: %v, %dx%d, want %dx%d", err, cfg.Cols, cfg.Rows, DefaultCols, DefaultRows)
	}
	cfg = Config{Command: []string{"cat"}, Cols: wire.MaxDim, Rows: 1}
	if err := cfg.validate(); err != nil || cfg.Cols != wire.MaxDim || cfg.Rows != 1 {
		t.Errorf("largest width: %v, %dx%d", err, cfg.Cols, cfg.Rows)
	}
}

// rawExchange sends req (exactly those bytes), closes the sending side,
// and returns the one answer line.
func rawExchange(t *testing.T, sock string, req []byte) wire.Response {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(req)
		c.(*net.UnixConn).CloseWrite()
		werr <- err
	}()
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v (%q)", err, line)
	}
	<-werr // a write the daemon stopped reading may fail; the answer counts
	var r wire.Response
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return r
}

// The ways a request line can end: a newline, "\r\n", or end of file after
// a request without its newline are all taken; an empty connection and one
// over the 10 MB limit get an error each, and the daemon keeps serving
// with none of the oversized request's bytes left reserved.
func TestRequestLineEnds(t *testing.T) {
	d := benchDaemon(t, Config{Command: []string{"cat"}})
	sock := d.SocketPath()
	for name, req := range map[string]string{
		"newline":       `{"type":"STATUS"}` + "\n",
		"CRLF":          `{"type":"STATUS"}` + "\r\n",
		"EOF":           `{"type":"STATUS"}`,
		"EOF after LF":  `{"type":"STATUS"}` + "\n" + `{"type":"STOP"}`,
		"spaces at EOF": `{"type":"STATUS"}  `,
	} {
		if r := rawExchange(t, sock, []byte(req)); r.Status != "ok" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if r := rawExchange(t, sock, nil); r.Status != "error" || !strings.Contains(r.Error, "connection closed before a complete request") {
		t.Errorf("empty connection: %+v", r)
	}
	if r := rawExchange(t, sock, []byte(" \n")); r.Status != "error" {
		t.Errorf("blank line: %+v", r)
	}
	// Just over the limit, with and without a newline.
	big := append([]byte(`{"type":"INPUT","data":"`), bytes.Repeat([]byte("x"), wire.MaxMessage)...)
	big = append(big, `"}`...)
	for name, req := range map[string][]byte{"no newline": big, "newline": append(big[:len(big):len(big)], '\n')} {
		if r := rawExchange(t, sock, req); r.Status != "error" || !strings.Contains(r.Error, "exceeds the maximum size") {
			t.Errorf("oversized, %s: %+v", name, r)
		}
	}
	if r := rawExchange(t, sock, []byte(`{"type":"STATUS"}`+"\n")); r.Status != "ok" {
		t.Errorf("after the oversized requests: %+v", r)
	}
}

// The byte budget is shared: a reservation past MaxPendingBytes is
// refused whole, and what is given back can be reserved again.
func TestLimitsBudget(t *testing.T) {
	var l limits
	if !l.reserve(MaxPendingBytes - 10) {
		t.Fatal("reserving under the budget refused")
	}
	if l.reserve(11) {
		t.Fatal("a reservation past the budget was granted")
	}
	if !l.reserve(10) {
		t.Fatal("a reservation up to the budget exactly was refused")
	}
	l.release(0, MaxPendingBytes)
	if l.pending != 0 || !l.reserve(MaxPendingBytes) {
		t.Fatalf("after release: %d pending", l.pending)
	}
	l.release(0, MaxPendingBytes)
	for i := range MaxConnections {
		if !l.admit() {
			t.Fatalf("connection %d refused", i+1)
		}
	}
	if l.admit() {
		t.Fatal("a connection past MaxConnections admitted")
	}
	l.release(1, 0)
	if !l.admit() {
		t.Fatal("a freed slot was not given out again")
	}
}
