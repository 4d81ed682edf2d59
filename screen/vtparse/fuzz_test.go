package vtparse

import (
	"slices"
	"testing"
)

// FuzzParse checks that chunk boundaries never change what the handler
// sees, and that the caps hold.
func FuzzParse(f *testing.F) {
	f.Add([]byte("hi\x1b[1;31m\x1b]0;t\x07\x1bP1$r\x1b\\é\x1b[?1049h"), uint8(3))
	f.Add([]byte("\x1b[38:2::1:2m\x1b]52;c;?\x1b\\\x1b(0\xe4\xb8"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		whole := parseAll(string(data), 0)
		split := parseAll(string(data), int(chunk%7)+1)
		a, b := whole.done(), split.done()
		if !slices.Equal(a, b) {
			t.Fatalf("whole and split differ:\n%q\n%q", a, b)
		}
		if len(whole.out) > 4*len(data)+8 {
			t.Fatalf("output %d bytes from %d", len(whole.out), len(data))
		}
	})
}
