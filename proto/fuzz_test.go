package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzReadFrame feeds arbitrary streams to the frame reader. Every frame it
// returns must be within the limits and re-encode to the bytes it came
// from; anything else must end the stream with io.EOF or ErrCorrupt.
func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(nil, TypeOpen, []byte(`{"terminalId":"a","cols":80,"rows":24,"cmd":"sh"}`)))
	f.Add(AppendDataFrame(AppendFrame(nil, TypeClose, []byte(`{"terminalId":"a"}`)), TypeInput, "a", []byte("ls\r")))
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Add([]byte{1, 0, 0, 1, 2})
	f.Add([]byte{9, 0, 0, 0, 1, '{'})
	f.Fuzz(func(t *testing.T, stream []byte) {
		for _, reuse := range []bool{false, true} {
			r := NewReader(bytes.NewReader(stream))
			if reuse {
				r.ReuseBuffer()
			}
			var again []byte
			for {
				fr, err := r.ReadFrame()
				if err == io.EOF {
					break
				}
				if err != nil {
					if !errors.Is(err, ErrCorrupt) {
						t.Fatalf("error %v does not wrap ErrCorrupt", err)
					}
					break
				}
				if len(fr.Body)+1 > MaxFrame {
					t.Fatalf("frame of %d bytes exceeds the limit", len(fr.Body)+1)
				}
				again = AppendFrame(again, fr.Type, fr.Body)
			}
			if !bytes.HasPrefix(stream, again) {
				t.Fatalf("re-encoded frames are not a prefix of the stream")
			}
		}
	})
}

// FuzzParseData checks that ParseData and DataBody agree and that a
// malformed body is always reported as ErrBadData.
func FuzzParseData(f *testing.F) {
	good, _ := DataBody("term", []byte("echo\r\n"))
	f.Add(good)
	f.Add([]byte{0, 0})
	f.Add([]byte{5, 0, 'a'})
	f.Add([]byte{1, 0, 0xff, 'x'})
	f.Fuzz(func(t *testing.T, body []byte) {
		id, data, err := ParseData(body)
		if err != nil {
			if !errors.Is(err, ErrBadData) {
				t.Fatalf("error %v does not wrap ErrBadData", err)
			}
			return
		}
		if CheckID(id) != nil {
			t.Fatalf("accepted an invalid id %q", id)
		}
		again, err := DataBody(id, data)
		if err != nil || !bytes.Equal(again, body) {
			t.Fatalf("round trip of %q: %q, %v", body, again, err)
		}
		frame := AppendDataFrame(nil, TypeOutput, id, data)
		if !bytes.Equal(frame[HeaderSize:], body) {
			t.Fatalf("AppendDataFrame disagrees with DataBody")
		}
	})
}

// FuzzParseControl throws arbitrary bodies at every control parser. A
// successful OPEN must be valid and survive a round trip; a failed one may
// only name an id that is itself valid.
func FuzzParseControl(f *testing.F) {
	for _, s := range []string{
		`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh","args":["-c","x"],"cwd":null,"env":{"A":"1"},"credit":4096}`,
		`{"terminalId":"t","cols":-1,"rows":24,"cmd":"sh"}`,
		`{"cols":80,"terminalId":"late","rows":`,
		`{"terminalId":"a","cols":1,"rows":2}`,
		`{"terminalId":"a","bytes":10}`,
		`[1,2]`, `null`, `{"terminalId":"\ud800"}`, `{"terminalId":"x","cols":1e3,"rows":0,"cmd":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseOpen(body)
		if o.TerminalID != "" && CheckID(o.TerminalID) != nil {
			t.Fatalf("ParseOpen returned an invalid id %q (err %v)", o.TerminalID, err)
		}
		if err == nil {
			if o.Cmd == "" {
				t.Fatalf("accepted an OPEN without cmd: %s", body)
			}
			var back Open
			if jerr := json.Unmarshal(Marshal(o), &back); jerr != nil {
				t.Fatalf("re-encoded OPEN does not decode: %v", jerr)
			}
			again, err := ParseOpen(Marshal(o))
			if err != nil || again.TerminalID != o.TerminalID || again.Cols != o.Cols || again.Rows != o.Rows || again.Cmd != o.Cmd {
				t.Fatalf("OPEN round trip: %+v -> %+v, %v", o, again, err)
			}
		}
		if id := RecoverID(body); id != "" && CheckID(id) != nil {
			t.Fatalf("RecoverID returned an invalid id %q", id)
		}
		ParseResize(body)
		ParseClose(body)
		ParseCredit(body)
	})
}
