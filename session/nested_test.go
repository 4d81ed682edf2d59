package session

import (
	"encoding/json"
	"testing"
)

func TestLiftData(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
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
	} {
		f, _, err := parseRequest([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		err = f.liftData()
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
