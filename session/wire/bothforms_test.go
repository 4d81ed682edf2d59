//go:build unix

package wire

import (
	"encoding/json"
	"testing"
)

func TestBothForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"WAIT","activity":true,"timeout_ms":5}`, `{"activity":true,"data":{"activity":true,"timeout_ms":5},"timeout_ms":5,"type":"WAIT"}`},
		{`{"type":"DEBUG","data":{"clear":true}}`, `{"clear":true,"data":{"clear":true},"type":"DEBUG"}`},
		{`{"type":"STOP"}`, `{"type":"STOP"}`},
		{`{"type":"INPUT","data":"ls\r"}`, `{"data":"ls\r","type":"INPUT"}`},
	} {
		var req map[string]any
		json.Unmarshal([]byte(tc.in), &req)
		got, _ := json.Marshal(BothForms(req))
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
}
