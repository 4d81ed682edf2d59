package main

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// standIn is a minimal daemon of the session protocol that answers "the
// other way" from ours, as the Python implementation does: it reads every
// field from the object under "data" and ignores the top level, and it
// joins the screen's rows with newlines without ending the last one. The
// CLI must work against it unchanged.
type standIn struct {
	t    *testing.T
	sock string

	mu   sync.Mutex
	rows []string       // the screen
	cols int            // its width
	got  map[string]any // the last "data" object seen per request type
}

func newStandIn(t *testing.T, rows ...string) *standIn {
	s := &standIn{t: t, rows: rows, cols: 80, got: map[string]any{}}
	s.sock = filepath.Join(t.TempDir(), "standin.sock")
	ln, err := net.Listen("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() { // ends when Cleanup closes the listener
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c) }()
		}
	}()
	return s
}

// nested returns what the last request of type typ carried under "data".
func (s *standIn) nested(typ string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[typ]
}

func (s *standIn) serve(c net.Conn) {
	defer c.Close()
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return
	}
	var req struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		json.NewEncoder(c).Encode(map[string]any{"status": "error", "error": "bad request"})
		return
	}
	data, fail := s.answer(req.Type, req.Data)
	if fail != "" {
		json.NewEncoder(c).Encode(map[string]any{"status": "error", "error": fail})
		return
	}
	json.NewEncoder(c).Encode(map[string]any{"status": "ok", "data": data})
}

func (s *standIn) answer(typ string, raw json.RawMessage) (data any, fail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ == "INPUT" {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return nil, "INPUT data must be a string"
		}
		s.got[typ] = text
		return nil, ""
	}
	d := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, "data must be an object"
		}
	}
	s.got[typ] = d
	num := func(name string) (int, bool) { f, ok := d[name].(float64); return int(f), ok }
	switch typ {
	case "STATUS":
		out := map[string]any{"running": true, "size": map[string]int{"rows": len(s.rows), "cols": s.cols}}
		if d["activity"] == true {
			out["activity"] = true
		}
		return out, ""
	case "WAIT":
		if d["activity"] == true {
			return map[string]any{"activity": true, "exited": false}, ""
		}
		return map[string]any{"exit_code": 3}, ""
	case "KILL":
		sig, ok := d["signal"].(string)
		if !ok {
			return nil, "missing data.signal"
		}
		return map[string]any{"signal_sent": sig}, ""
	case "RESIZE":
		cols, okc := num("cols")
		rows, okr := num("rows")
		if !okc || !okr {
			return nil, "missing data.cols or data.rows"
		}
		s.cols = cols
		for len(s.rows) < rows {
			s.rows = append(s.rows, "")
		}
		s.rows = s.rows[:rows]
		return map[string]any{"size": map[string]int{"rows": rows, "cols": cols}}, ""
	case "OUTPUT":
		if _, ok := d["format"].(string); !ok {
			return nil, "missing data.format"
		}
		from, to := 1, len(s.rows)
		if n, ok := num("from"); ok {
			from = max(n, 1)
		}
		if n, ok := num("to"); ok {
			to = min(n, len(s.rows))
		}
		var lines []string
		if from <= to {
			lines = s.rows[from-1 : to]
		}
		return map[string]any{
			"screen": strings.Join(lines, "\n"), // no newline after the last row
			"cursor": map[string]int{"row": 1, "col": 0},
			"size":   map[string]int{"rows": len(s.rows), "cols": s.cols},
			"from":   from, "to": to,
		}, ""
	case "DEBUG":
		return map[string]any{"unhandled": []any{}, "dropped": 0, "termios": map[string]any{"mode": "cooked"}}, ""
	case "STOP":
		return map[string]any{"message": "Shutting down"}, ""
	}
	return nil, "Unknown command: " + typ
}

// TestCLIAgainstNestedFieldDaemon runs every client subcommand against the
// stand-in, which sees only the fields the CLI nests under "data".
func TestCLIAgainstNestedFieldDaemon(t *testing.T) {
	t.Parallel()
	d := newStandIn(t, "$ ls", "file", "")
	run := func(args ...string) string {
		t.Helper()
		r := ptyplex(t, "", append(args[:1:1], append([]string{"--socket", d.sock}, args[1:]...)...)...)
		if r.code != 0 {
			t.Fatalf("ptyplex %s: %v", strings.Join(args, " "), r)
		}
		return r.stdout
	}
	expect := func(got, want, what string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %q, want %q", what, got, want)
		}
	}

	// The last row is blank and the stand-in sends no newline after it: it
	// is still a row, numbered from the answer's from/to.
	expect(run("output", "--no-color", "-n"), " 1\t$ ls\n 2\tfile\n 3\t\n", "output -n")
	expect(run("output", "--no-color"), "$ ls\nfile\n\n", "output")
	expect(run("output", "--no-color", "--from", "2", "--to", "2", "-n"), " 2\tfile\n", "output of line 2")
	expect(run("status"), "Running: true\nActivity: true\nSize: 80x3\nScrollback: 0/0\n", "status")
	expect(run("wait"), "Terminal activity: true\nApplication exited: false\n", "wait")
	expect(run("wait", "--quiet"), "3\n", "wait --quiet")
	expect(run("wait", "--line", "2", "--regex", "^file$"), "Condition already met on line 2\n", "wait --line")
	expect(run("kill", "--signal", "SIGINT"), "Signal sent: SIGINT\n", "kill")
	expect(run("resize", "--size", "100x30"), "Terminal resized to 100x30\n", "resize")
	run("debug", "--clear")
	if got := d.nested("DEBUG"); got.(map[string]any)["clear"] != true {
		t.Errorf("debug --clear sent %v under data", got)
	}
	run("input", "--text", `hi\r`)
	expect(d.nested("INPUT").(string), "hi\r", "INPUT data")
	run("stop")
}
