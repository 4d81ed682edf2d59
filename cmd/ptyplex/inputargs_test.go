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

// parseInterleaved takes flags between key names and records, for every
// --text, how many names came before it: input types those first.
func TestParseInterleaved(t *testing.T) {
	type seg = textAt
	for _, c := range []struct {
		name  string
		args  []string
		names []string
		texts []seg
	}{
		{"keys only", []string{"--keys", "Escape", "Enter"}, []string{"Escape", "Enter"}, nil},
		{"text first", []string{"--text", ":wq", "--keys", "Enter"}, []string{"Enter"}, []seg{{0, ":wq"}}},
		{"keys around the text", []string{"--keys", "Escape", "--text", ":wq", "Enter"}, []string{"Escape", "Enter"}, []seg{{1, ":wq"}}},
		{"flags after the names", []string{"--keys", "Up", "Down", "--text", "x"}, []string{"Up", "Down"}, []seg{{2, "x"}}},
		{"two texts around a key", []string{"--text", "ihi", "--keys", "Escape", "--text", ":wq", "Enter"}, []string{"Escape", "Enter"}, []seg{{0, "ihi"}, {1, ":wq"}}},
		{"two texts, no keys", []string{"--text", "A", "--text", "B"}, nil, []seg{{0, "A"}, {0, "B"}}},
		{"after -- everything is a name", []string{"--keys", "a", "--", "--text", "b"}, []string{"a", "--text", "b"}, nil},
	} {
		cl := newCLI("input", "", "", true)
		texts := &textFlags{}
		cl.fs.Var(texts, "text", "")
		cl.fs.Bool("keys", false, "")
		names, done, code := parseInterleaved(cl, c.args, &texts.names)
		if done || code != exitOK || !slices.Equal(names, c.names) || !slices.Equal(texts.list, c.texts) {
			t.Errorf("%s: names %q, texts %v, done %v code %d; want %q, %v", c.name, names, texts.list, done, code, c.names, c.texts)
		}
	}
	// A flag it does not know ends the parse with a usage error.
	cl := newCLI("input", "ptyplex input", "", true)
	var n int
	if names, done, code := parseInterleaved(cl, []string{"a", "--nope"}, &n); !done || code != exitUsage || names != nil {
		t.Errorf("unknown flag: %q %v %d", names, done, code)
	}
}
