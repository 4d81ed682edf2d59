//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestDaemonAcceptsNestedFields sends every request with its fields nested
// under "data", as the Python client of the protocol does, and with both
// forms at once, where the top level wins.
func TestDaemonAcceptsNestedFields(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "40x10", "--", "cat")
	for _, tc := range []struct{ req, want string }{
		{`{"type":"RESIZE","data":{"cols":100,"rows":30}}`, `{"status":"ok","data":{"size":{"rows":30,"cols":100},"cols":100,"rows":30}}`},
		{`{"type":"RESIZE","cols":90,"rows":20,"data":{"cols":100,"rows":30}}`, `{"status":"ok","data":{"size":{"rows":20,"cols":90},"cols":90,"rows":20}}`},
		{`{"type":"RESIZE","data":{"cols":0,"rows":30}}`, `{"status":"error","error":"Invalid size: 0x30 (each must be 1..`},
		{`{"type":"STATUS","data":"x"}`, `{"status":"error","error":"Invalid request: field 'data' must be an object"}`},
		{`{"type":"KILL","data":{"signal":"NOTASIGNAL"}}`, `{"status":"error","error":"Invalid signal: NOTASIGNAL"}`},
		{`{"type":"OUTPUT","data":{"format":"xml"}}`, `{"status":"error","error":"Invalid request: unknown format \"xml\"`},
	} {
		if got := rawExchange(t, s.sock, tc.req+"\n"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s\n got %s\nwant %s...", tc.req, got, tc.want)
		}
	}

	// OUTPUT's range nested: line 1 alone, then the top-level range wins.
	s.input(`first\r`)
	s.waitText("first\nfirst")
	d := rawCall(t, s.sock, `{"type":"OUTPUT","data":{"format":"ascii","from":2,"to":2}}`)["data"].(map[string]any)
	if d["screen"] != "first\n" || d["from"] != 2.0 || d["to"] != 2.0 {
		t.Errorf("nested OUTPUT range: %v", d)
	}
	d = rawCall(t, s.sock, `{"type":"OUTPUT","from":1,"to":1,"data":{"from":2,"to":3}}`)["data"].(map[string]any)
	if d["from"] != 1.0 || d["to"] != 1.0 {
		t.Errorf("top-level OUTPUT range did not win: %v", d)
	}

	// STATUS and WAIT in activity mode, nested: the echo above is activity.
	st := rawCall(t, s.sock, `{"type":"STATUS","data":{"activity":true}}`)["data"].(map[string]any)
	if st["activity"] == nil {
		t.Errorf("nested STATUS activity mode ignored: %v", st)
	}
	// Nothing new since: a nested timeout_ms bounds the nested activity WAIT.
	w := rawExchange(t, s.sock, `{"type":"WAIT","data":{"activity":true,"timeout_ms":1}}`+"\n")
	if w != `{"status":"ok","data":{"activity":false,"exited":false,"timed_out":true}}` {
		t.Errorf("nested activity WAIT with timeout: %s", w)
	}

	// DEBUG's own nested form and the top-level one both clear.
	s.input(`\e[998z\r`)
	s.waitFor("unhandled sequence", func(string) bool {
		return strings.Contains(s.ok("debug"), "998z")
	})
	rawCall(t, s.sock, `{"type":"DEBUG","data":{"clear":true}}`)
	if out := s.ok("debug"); strings.Contains(out, "998z") {
		t.Errorf("nested DEBUG clear did not clear:\n%s", out)
	}

	// KILL nested, then WAIT in normal mode nested (activity false wins over
	// nothing): the exit code of SIGINT.
	if got := rawExchange(t, s.sock, `{"type":"KILL","data":{"signal":"SIGINT"}}`+"\n"); got != `{"status":"ok","data":{"signal_sent":"SIGINT"}}` {
		t.Errorf("nested KILL: %s", got)
	}
	if got := rawExchange(t, s.sock, `{"type":"WAIT","activity":false,"data":{"activity":true}}`+"\n"); got != `{"status":"ok","data":{"exit_code":130}}` {
		t.Errorf("WAIT with top-level activity false: %s", got)
	}
}
