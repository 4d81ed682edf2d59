//go:build unix

package wire

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseRequestErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "Invalid request: empty request"},
		{`{`, "Invalid request: unexpected end of JSON input"},
		{`[]`, "Invalid request: expected a JSON object"},
		{`null`, "Invalid request: expected a JSON object"},
		{`{}`, "Invalid request: missing 'type' field"},
		{`{"type":null}`, "Invalid request: missing 'type' field"},
		{`{"type":1}`, "Invalid request: 'type' must be a string"},
	} {
		_, _, err := ParseRequest([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseRequest(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
}

type liftCase struct{ in, want, err string }

// checkLift runs lift on each case's request and compares the fields in
// want (or the error).
func checkLift(t *testing.T, lift func(Fields) error, cases []liftCase) {
	t.Helper()
	for _, tc := range cases {
		f, _, err := ParseRequest([]byte(tc.in))
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
		var want Fields
		json.Unmarshal([]byte(tc.want), &want)
		for name, raw := range want {
			if string(f[name]) != string(raw) {
				t.Errorf("%s: field %s = %s, want %s", tc.in, name, f[name], raw)
			}
		}
	}
}

func TestLiftData(t *testing.T) {
	checkLift(t, Fields.LiftData, []liftCase{
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
	checkLift(t, Fields.LiftInputData, []liftCase{
		// The text at the top level stays as it is.
		{`{"type":"INPUT","data":"ls\r"}`, `{"data":"ls\r"}`, ""},
		// The nested form: data's own data is the text, its other fields lift.
		{`{"type":"INPUT","data":{"data":"ls\r","with_gen":true}}`, `{"data":"ls\r","with_gen":true}`, ""},
		{`{"type":"INPUT","with_gen":false,"data":{"data":"x","with_gen":true}}`, `{"data":"x","with_gen":false}`, ""},
		{`{"type":"INPUT","data":{"type":"STOP","data":"x"}}`, `{"type":"INPUT","data":"x"}`, ""},
	})
}

func TestTimeoutField(t *testing.T) {
	max := time.Duration(MaxTimeoutMS) * time.Millisecond
	for _, tc := range []struct {
		raw  string
		want time.Duration
		err  string
	}{
		{`0`, 0, ""},
		{`1500`, 1500 * time.Millisecond, ""},
		{`5e3`, 5 * time.Second, ""},
		{`-0`, 0, ""},
		{`9223372036854`, max, ""},
		// The first count whose nanoseconds pass 2^63, and beyond.
		{`9223372036855`, max, ""},
		{`9223372036854775807`, max, ""},
		{`18446744073709551616`, max, ""},
		{`1e19`, max, ""},
		{`1e400`, max, ""},
		{`-1`, 0, "Invalid request: field 'timeout_ms' must not be negative"},
		{`-9223372036854775809`, 0, "Invalid request: field 'timeout_ms' must not be negative"},
		{`-1e400`, 0, "Invalid request: field 'timeout_ms' must not be negative"},
		{`1.5`, 0, "Invalid request: field 'timeout_ms' must be an integer"},
		{`"100"`, 0, "Invalid request: field 'timeout_ms' must be an integer"},
		{`true`, 0, "Invalid request: field 'timeout_ms' must be an integer"},
	} {
		f := Fields{"timeout_ms": []byte(tc.raw)}
		got, ok, err := f.Timeout("timeout_ms")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %v, %v; want error %q", tc.raw, got, err, tc.err)
			}
			continue
		}
		if err != nil || !ok || got != tc.want || got < 0 {
			t.Errorf("%s: %v %v %v; want %v", tc.raw, got, ok, err, tc.want)
		}
	}
}
