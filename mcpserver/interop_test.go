//go:build unix

package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/standin"
)

// TestCursorKeysFollowTheTerminalMode: with cursor_keys auto, Up is sent
// as ESC O A once the program has turned on application cursor keys
// (DECCKM, reported by STATUS), and as ESC [ A otherwise.
func TestCursorKeysFollowTheTerminalMode(t *testing.T) {
	t.Parallel()
	c := connect(t)
	for _, tc := range []struct{ decckm, want string }{
		{`\033[?1h`, "1b 4f 41"},
		{"", "1b 5b 41"},
	} {
		s := c.start(map[string]any{"command": []string{"sh", "-c",
			`stty raw -echo; printf '` + tc.decckm + `ready\r\n'; od -An -tx1 -N3`}})
		c.until(s.Session, `ready`)
		ok[map[string]any](c, "input", map[string]any{"session": s.Session, "keys": []string{"Up"}})
		w := c.until(s.Session, `[0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2}`)
		if w.Match != tc.want {
			t.Errorf("Up with DECCKM %q set: the program read %q, want %q", tc.decckm, w.Match, tc.want)
		}
	}
}

// TestWaitTimeoutClamped: a timeout_ms above the documented maximum, even
// one near 2^63 ns that would wrap to a negative Duration, or one past
// what an integer holds (the SDK refused those as unreadable), is clamped
// to the maximum and the result says so; a negative one, or one with a
// fraction, is refused. The program exits by itself, so the wait ends with
// its exit code, whereas a wrapped timeout ends it as timed out before
// anything is asked.
func TestWaitTimeoutClamped(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.start(map[string]any{"command": []string{"sh", "-c", "exit 7"}})
	// 9223372036855 ms is the first count whose nanoseconds pass 2^63.
	for _, ms := range []json.Number{"600001", "9223372036855", "9000000000000000000",
		"9223372036854775807", "9223372036854775808", "18446744073709551616", "1e20"} {
		res := c.call("wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": ms})
		w := ok[waitedTimeout](c, "wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": ms})
		if w.TimedOut || !w.Met || w.ExitCode == nil || *w.ExitCode != 7 || w.TimeoutMs != 600000 {
			t.Errorf("timeout_ms %s: %+v", ms, w)
		}
		if !strings.Contains(text(res), "over the maximum") {
			t.Errorf("timeout_ms %s: the result does not say it was clamped: %s", ms, text(res))
		}
	}
	c.fails("wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": -1}, "timeout_ms")
	c.fails("wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": json.Number("-1e20")}, "timeout_ms")
	c.fails("wait", map[string]any{"session": s.Session, "exit": true, "timeout_ms": 1.5}, "timeout_ms")
}

type pastEnd struct {
	Screen string `json:"screen"`
	From   *int   `json:"from"`
	To     *int   `json:"to"`
	Lines  int    `json:"lines"`
}

type waitedTimeout struct {
	waited
	TimeoutMs int64 `json:"timeout_ms"`
}

// TestOutputPastTheEnd: a range that starts past the last line returns no
// lines and reports no range, instead of one that was never returned.
func TestOutputPastTheEnd(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(nil)
	for _, args := range []map[string]any{
		{"session": s.Session, "from": 30},
		{"session": s.Session, "from": 25, "to": 40},
		{"session": s.Session, "from": -50, "to": -40}, // no scrollback yet
	} {
		res := c.call("output", args)
		out := ok[pastEnd](c, "output", args)
		if out.Screen != "" || out.From != nil || out.To != nil || out.Lines != 0 {
			t.Errorf("output %v: %s", args, text(res))
		}
		if !strings.Contains(text(res), "no lines") {
			t.Errorf("output %v: text does not say no lines came back: %s", args, text(res))
		}
	}
	// The last line alone still reports its range.
	res := c.call("output", map[string]any{"session": s.Session, "from": 24, "to": 99})
	if !strings.Contains(text(res), "lines 24..24") {
		t.Errorf("output of the last line: %s", text(res))
	}
}

// TestOutputReversedRange: a range whose start comes after its end is
// reported as such, not as "past what exists" (which sent an agent to
// look for lines that do exist), while a range past the end keeps that
// text.
func TestOutputReversedRange(t *testing.T) {
	t.Parallel()
	c := connect(t)
	s := c.shell(nil)
	for _, args := range []map[string]any{
		{"session": s.Session, "from": 3, "to": 1},
		{"session": s.Session, "to": -5},
		{"session": s.Session, "from": -2, "to": -6},
	} {
		res := c.call("output", args)
		if got := text(res); !strings.Contains(got, "no lines (the requested range is empty: from ") || strings.Contains(got, "past what exists") {
			t.Errorf("output %v: %s", args, got)
		}
	}
	res := c.call("output", map[string]any{"session": s.Session, "from": 30, "to": 40})
	if !strings.Contains(text(res), "past what exists") {
		t.Errorf("output past the end: %s", text(res))
	}
}

// TestToolsAgainstNestedFieldDaemon drives a stand-in daemon that reads
// fields only under "data" and does not end its last row with a newline
// (package standin), by socket path, through every tool that talks to it.
func TestToolsAgainstNestedFieldDaemon(t *testing.T) {
	t.Parallel()
	d := standin.Start(t, "$ ls", "file", "")
	c := connect(t)
	sess := map[string]any{"session": d.Socket}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"session": d.Socket}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	if out := ok[pastEnd](c, "output", with("number", true)); out.Screen != " 1\t$ ls\n 2\tfile\n 3\t\n" || out.Lines != 3 {
		t.Errorf("numbered output: %+v", out)
	}
	if out := ok[pastEnd](c, "output", with("from", 2, "to", 2)); out.Screen != "file" || *out.From != 2 {
		t.Errorf("output of line 2: %+v", out)
	}
	if st := ok[map[string]any](c, "status", sess); st["running"] != true {
		t.Errorf("status: %v", st)
	}
	if w := ok[waited](c, "wait", with("exit", true)); !w.Met || w.ExitCode == nil || *w.ExitCode != 3 {
		t.Errorf("wait for exit: %+v", w)
	}
	if w := ok[waited](c, "wait", with("line", 2, "regex", "^file$")); !w.AlreadyMet {
		t.Errorf("wait on line 2: %+v", w)
	}
	if k := ok[map[string]any](c, "kill", with("signal", "SIGINT")); k["signal_sent"] != "SIGINT" {
		t.Errorf("kill: %v", k)
	}
	if r := ok[map[string]any](c, "resize", with("size", "100x30")); r["size"].(map[string]any)["cols"] != 100.0 {
		t.Errorf("resize: %v", r)
	}
	ok[map[string]any](c, "input", with("text", `hi\r`))
	if got := d.Nested("INPUT"); got != "hi\r" {
		t.Errorf("input sent %q", got)
	}
	ok[map[string]any](c, "debug", with("clear", true))
	if got := d.Nested("DEBUG"); got.(map[string]any)["clear"] != true {
		t.Errorf("debug sent %v under data", got)
	}
}
