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

// The program, its arguments and its directory are run as the host wrote
// them or not at all: a string that is not valid UTF-8 as sent (a stray
// byte, half a surrogate pair) was read as U+FFFD, a file nobody named.
// The environment's values are taken as decoded.
func TestOpenRefusesLaunchStringsNotUTF8(t *testing.T) {
	for extra, want := range map[string]string{
		`"cmd":"s` + "\xff" + `h"`:                    `malformed OPEN: cmd is not valid UTF-8 (byte 0xff at offset 1 of its JSON string)`,
		`"cmd":"sh","cwd":"/t` + "\xfe" + `"`:         `malformed OPEN: cwd is not valid UTF-8 (byte 0xfe at offset 2`,
		`"cmd":"sh","args":["-c","echo \ud800"]`:      `malformed OPEN: args[1] is not valid UTF-8 (the escape \ud800 is half of a surrogate pair)`,
		`"cmd":"sh","args":["ok","x` + "\x80" + `y"]`: `malformed OPEN: args[1] is not valid UTF-8`,
	} {
		o, err := ParseOpen([]byte(`{"terminalId":"t","cols":80,"rows":24,` + extra + `}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", extra, err, want)
		}
		if o.TerminalID != "t" {
			t.Errorf("%s: refused under %q", extra, o.TerminalID)
		}
	}
	o, err := ParseOpen([]byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh","args":["é","\ud83d\ude00"],"env":{"A":"v` + "\xff" + `"}}`))
	if err != nil || o.Args[1] != "😀" || o.Env["A"] != "v\ufffd" {
		t.Fatalf("valid strings and an env value taken as decoded: %+v, %v", o, err)
	}
}
