package proto

import (
	"strings"
	"testing"
)

// ATTACH's mode and DETACH's "to" are read strictly; their absence reads
// as before viewers existed.
func TestParseViewerFields(t *testing.T) {
	for _, c := range []struct {
		body, mode, err string
	}{
		{`{"terminalId":"a","offset":0}`, "", ""},
		{`{"terminalId":"a","offset":0,"mode":null}`, "", ""},
		{`{"terminalId":"a","offset":0,"mode":"hold"}`, "", ""},
		{`{"terminalId":"a","offset":0,"mode":"view"}`, AttachView, ""},
		{`{"terminalId":"a","offset":0,"mode":"watch"}`, "", `mode must be "hold" or "view", not "watch"`},
		{`{"terminalId":"a","offset":0,"mode":1}`, "", `mode must be`},
	} {
		a, id, err := ParseAttach([]byte(c.body))
		switch {
		case c.err == "" && (err != nil || a.Mode != c.mode):
			t.Errorf("ATTACH %s: mode %q, %v; want %q", c.body, a.Mode, err, c.mode)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || id != "a"):
			t.Errorf("ATTACH %s: %v (id %q); want an error saying %q about a", c.body, err, id, c.err)
		}
	}
	for _, c := range []struct {
		body string
		to   uint64 // 0: none
		err  bool
	}{
		{`{"terminalId":"a"}`, 0, false},
		{`{"terminalId":"a","to":null}`, 0, false},
		{`{"terminalId":"a","to":3}`, 3, false},
		{`{"terminalId":"a","to":0}`, 0, true},
		{`{"terminalId":"a","to":"3"}`, 0, true},
		{`{"terminalId":"a","to":-1}`, 0, true},
		{`{"terminalId":"a","to":1.5}`, 0, true},
	} {
		d, id, err := ParseDetach([]byte(c.body))
		if c.err {
			if err == nil || id != "a" {
				t.Errorf("DETACH %s: %+v, %v (id %q); want an error about a", c.body, d, err, id)
			}
			continue
		}
		got := uint64(0)
		if d.To != nil {
			got = *d.To
		}
		if err != nil || d.TerminalID != "a" || got != c.to {
			t.Errorf("DETACH %s: %+v (to %d), %v; want to %d", c.body, d, got, err, c.to)
		}
	}
}
