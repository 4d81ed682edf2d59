//go:build unix

package main

import (
	"encoding/base64"
	"slices"
	"testing"
)

// inputRequest adds "data_b64" only for exact bytes that are not UTF-8:
// those go through unchanged, while "data" keeps interminai's spelling
// for a daemon that knows only that field.
func TestInputRequest(t *testing.T) {
	for _, c := range []struct {
		name    string
		data    string
		exact   bool
		wantB64 bool
	}{
		{"UTF-8, exact", "café\n", true, false},
		{"UTF-8, --text", "café\n", false, false},
		{"binary from stdin", "a\xff\x80b", true, true},
		{"a cut sequence from stdin", "\xc3", true, true},
		// --text's \xHH of a lone byte means U+00HH, as in interminai.
		{"binary from --text", "a\xffb", false, false},
		{"empty", "", true, false},
	} {
		req := inputRequest([]byte(c.data), c.exact)
		if req["type"] != "INPUT" || req["data"] != wireText([]byte(c.data)) {
			t.Errorf("%s: %v", c.name, req)
		}
		b64, ok := req["data_b64"]
		if ok != c.wantB64 {
			t.Errorf("%s: data_b64 present %v, want %v", c.name, ok, c.wantB64)
			continue
		}
		if ok {
			raw, err := base64.StdEncoding.DecodeString(b64.(string))
			if err != nil || string(raw) != c.data {
				t.Errorf("%s: data_b64 decodes to %q (%v), want %q", c.name, raw, err, c.data)
			}
		}
	}
}

// parseInterleaved takes flags between key names and says how many names
// came before --text, which input types before the text.
func TestParseInterleaved(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		names   []string
		watchAt int
	}{
		{"keys only", []string{"--keys", "Escape", "Enter"}, []string{"Escape", "Enter"}, -1},
		{"text first", []string{"--text", ":wq", "--keys", "Enter"}, []string{"Enter"}, 0},
		{"keys around the text", []string{"--keys", "Escape", "--text", ":wq", "Enter"}, []string{"Escape", "Enter"}, 1},
		{"flags after the names", []string{"--keys", "Up", "Down", "--text", "x"}, []string{"Up", "Down"}, 2},
		{"after -- everything is a name", []string{"--keys", "a", "--", "--text", "b"}, []string{"a", "--text", "b"}, -1},
	} {
		cl := newCLI("input", "", "", true)
		cl.fs.String("text", "", "")
		cl.fs.Bool("keys", false, "")
		names, at, done, code := parseInterleaved(cl, c.args, "text")
		if done || code != exitOK || !slices.Equal(names, c.names) || at != c.watchAt {
			t.Errorf("%s: names %q, text at %d, done %v code %d; want %q at %d", c.name, names, at, done, code, c.names, c.watchAt)
		}
	}
	// A flag it does not know ends the parse with a usage error.
	cl := newCLI("input", "ptyplex input", "", true)
	if names, at, done, code := parseInterleaved(cl, []string{"a", "--nope"}, "text"); !done || code != exitUsage || names != nil || at != -1 {
		t.Errorf("unknown flag: %q %d %v %d", names, at, done, code)
	}
}
