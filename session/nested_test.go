package session

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

type liftCase struct{ in, want, err string }

// checkLift runs lift on each case's request and compares the fields in
// want (or the error).
func checkLift(t *testing.T, lift func(fields) error, cases []liftCase) {
	t.Helper()
	for _, tc := range cases {
		f, _, err := parseRequest([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		err = lift(f)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		var want fields
		json.Unmarshal([]byte(tc.want), &want)
		for name, raw := range want {
			if string(f[name]) != string(raw) {
				t.Errorf("%s: field %s = %s, want %s", tc.in, name, f[name], raw)
			}
		}
	}
}

func TestLiftData(t *testing.T) {
	checkLift(t, fields.liftData, []liftCase{
		{`{"type":"WAIT","data":{"activity":true}}`, `{"activity":true}`, ""},
		{`{"type":"KILL","data":{"signal":"SIGINT"}}`, `{"signal":"SIGINT"}`, ""},
		{`{"type":"RESIZE","data":{"cols":100,"rows":30}}`, `{"cols":100,"rows":30}`, ""},
		// Top level wins; a null top-level field counts as not given.
		{`{"type":"RESIZE","cols":90,"data":{"cols":100,"rows":30}}`, `{"cols":90,"rows":30}`, ""},
		{`{"type":"OUTPUT","from":null,"data":{"from":-5}}`, `{"from":-5}`, ""},
		// "type" is never taken from data.
		{`{"type":"STATUS","data":{"type":"STOP"}}`, `{"type":"STATUS"}`, ""},
		{`{"type":"STATUS","data":null}`, `{"type":"STATUS"}`, ""},
		{`{"type":"STATUS","data":"x"}`, "", "Invalid request: field 'data' must be an object"},
		{`{"type":"STATUS","data":[1]}`, "", "Invalid request: field 'data' must be an object"},
	})
}

func TestLiftInputData(t *testing.T) {
	checkLift(t, fields.liftInputData, []liftCase{
		// The text at the top level stays as it is.
		{`{"type":"INPUT","data":"ls\r"}`, `{"data":"ls\r"}`, ""},
		// The nested form: data's own data is the text, its other fields lift.
		{`{"type":"INPUT","data":{"data":"ls\r","with_gen":true}}`, `{"data":"ls\r","with_gen":true}`, ""},
		{`{"type":"INPUT","with_gen":false,"data":{"data":"x","with_gen":true}}`, `{"data":"x","with_gen":false}`, ""},
		{`{"type":"INPUT","data":{"type":"STOP","data":"x"}}`, `{"type":"INPUT","data":"x"}`, ""},
	})
}

// The Python implementation's INPUT, {"data":{"data":TEXT}}, types TEXT.
func TestNestedInputTypes(t *testing.T) {
	d := benchDaemon(t, Config{Command: []string{"cat"}})
	sock := d.SocketPath()
	line, err := bufio.NewReader(sendRaw(t, sock, `{"type":"INPUT","data":{"data":"nested-input\r"}}`)).ReadString('\n')
	if err != nil || !strings.Contains(line, `"status":"ok"`) {
		t.Fatalf("nested INPUT answered %q (%v)", line, err)
	}
	untilState(t, d, func(st *state) bool { return strings.Contains(st.scr.Line(1, false), "nested-input") })
	r, err := Call(sock, map[string]any{"type": "INPUT", "data": map[string]any{"text": "x"}})
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
