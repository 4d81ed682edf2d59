package vtparse

import "testing"

// TestASCIIRun compares the word-at-a-time scan with the plain definition
// for every byte value at every position of a word and across words.
func TestASCIIRun(t *testing.T) {
	slow := func(b []byte) int {
		n := 0
		for n < len(b) && b[n] >= 0x20 && b[n] < 0x7f {
			n++
		}
		return n
	}
	for length := 0; length <= 24; length++ {
		for pos := 0; pos < length; pos++ {
			for v := 0; v < 256; v++ {
				b := make([]byte, length)
				for i := range b {
					b[i] = 'a' + byte(i%26)
				}
				b[pos] = byte(v)
				if got, want := asciiRun(b), slow(b); got != want {
					t.Fatalf("len %d, byte %#x at %d: asciiRun %d, want %d", length, v, pos, got, want)
				}
			}
		}
	}
	// Pairs of neighbouring special bytes (borrow and carry chains).
	for _, pair := range [][2]byte{{0x00, 0x1f}, {0xff, 0x7f}, {0x1f, 0x20}, {0x7e, 0x7f}, {0x80, 0x00}, {0x20, 0xff}} {
		for pos := 0; pos+1 < 16; pos++ {
			b := []byte("abcdefghijklmnop")
			b[pos], b[pos+1] = pair[0], pair[1]
			if got, want := asciiRun(b), slow(b); got != want {
				t.Fatalf("%q: asciiRun %d, want %d", b, got, want)
			}
		}
	}
}
