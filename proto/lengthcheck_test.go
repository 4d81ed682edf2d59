package proto

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// A zero or oversized length is refused as soon as its four bytes are in,
// with that reason, while the peer keeps the stream open: the reader used
// to wait for the type byte, and reported nothing until the peer went on
// or closed (then as a header cut short).
func TestBadLengthRefusedBeforeTheTypeByte(t *testing.T) {
	for name, tc := range map[string]struct {
		hdr  []byte
		want string
	}{
		"zero":      {[]byte{0, 0, 0, 0}, "zero frame length"},
		"oversized": {[]byte{1, 0, 0, 1}, "exceeds the"},
	} {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			go pw.Write(tc.hdr) // and nothing more: the stream stays open
			got := make(chan error, 1)
			go func() {
				_, err := NewReader(pr).ReadFrame()
				got <- err
			}()
			select {
			case err := <-got:
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("ReadFrame: %v, want %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ReadFrame waited for a fifth byte")
			}
		})
	}
}

// Four bytes of a good length and then the end: a header cut short.
func TestHeaderCutAfterTheLength(t *testing.T) {
	_, err := NewReader(strings.NewReader("\x05\x00\x00\x00")).ReadFrame()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "inside a frame header (4 of 5 bytes)") {
		t.Fatalf("ReadFrame: %v", err)
	}
}
