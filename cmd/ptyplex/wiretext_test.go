//go:build unix

package main

import "testing"

// TestWireText: UTF-8 passes as it is; a byte outside any valid sequence
// becomes the character U+00HH (interminai's \xHH), not U+FFFD.
func TestWireText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"caf\xc3\xa9":      "café",
		"\xff":             "\u00ff",
		"a\x80b":           "a\u0080b",
		"\xc3":             "\u00c3", // a sequence cut short
		"\xc3\xa9\xff\xe2": "é\u00ff\u00e2",
	} {
		if got := wireText([]byte(in)); got != want {
			t.Errorf("wireText(%q) = %q, want %q", in, got, want)
		}
	}
}
