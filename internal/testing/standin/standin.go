// Package standin is a minimal daemon of the session protocol for tests,
// written the other way from ours: it reads every request's fields from
// the object under "data" and ignores the top level, and it joins the
// screen's rows with newlines without ending the last one, as the Python
// implementation of the protocol does. Clients (the CLI, the MCP server)
// must work against it unchanged.
package standin

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Daemon is a running stand-in.
type Daemon struct {
	// Socket is the path it listens on.
	Socket string

	mu   sync.Mutex
	rows []string       // the screen
	cols int            // its width
	got  map[string]any // the last "data" object seen per request type
}

// Start listens in a temporary directory of t with a screen of the given
// rows (80 columns) and stops when t ends.
func Start(t testing.TB, rows ...string) *Daemon {
	s := &Daemon{rows: rows, cols: 80, got: map[string]any{}}
	s.Socket = filepath.Join(t.TempDir(), "standin.sock")
	ln, err := net.Listen("unix", s.Socket)
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

// Nested returns what the last request of type typ carried under "data".
func (s *Daemon) Nested(typ string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[typ]
}

func (s *Daemon) serve(c net.Conn) {
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

func (s *Daemon) answer(typ string, raw json.RawMessage) (data any, fail string) {
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
