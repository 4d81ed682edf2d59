//go:build unix

package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseRequest feeds arbitrary request lines to the session protocol's
// parser and then reads every field the request handlers read, the way
// they read them. Nothing may panic, every rejection must be a client
// error ("Invalid request: ..."), and an accepted request must be a JSON
// object whose "type" is a string.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"INPUT","data":"ihello\u001b:wq\r"}`,
		`{"type":"OUTPUT","format":"ansi","from":"-","to":-1}`,
		`{"type":"WAIT","activity":true,"timeout_ms":500}`,
		`{"type":"KILL","signal":"SIGTERM"}`, `{"type":"KILL","signal":9}`,
		`{"type":"RESIZE","cols":100,"rows":30}`, `{"type":"DEBUG","clear":true}`,
		`{"type":7}`, `{"type":null}`, `[]`, `null`, ``, `{"type":"STATUS"} {}`, `{"type":"OUTPUT","from":"12x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fs, typ, err := ParseRequest(line)
		if err != nil {
			clientError(t, err)
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(line, &obj) != nil || obj == nil {
			t.Fatalf("accepted %q, which is not a JSON object", line)
		}
		var want string
		if json.Unmarshal(obj["type"], &want) != nil || want != typ {
			t.Fatalf("type %q, want %q", typ, want)
		}
		for _, name := range []string{"format", "data", "signal"} {
			if _, _, err := fs.Str(name); err != nil {
				clientError(t, err)
			}
		}
		for _, name := range []string{"signal", "cols", "rows", "timeout_ms"} {
			if _, _, err := fs.Int(name); err != nil {
				clientError(t, err)
			}
		}
		for _, name := range []string{"activity", "clear"} {
			if _, err := fs.Bool(name); err != nil {
				clientError(t, err)
			}
		}
		for _, oldest := range []bool{true, false} {
			if _, _, _, err := fs.LineNumber("from", oldest); err != nil {
				clientError(t, err)
			}
		}
	})
}

func clientError(t *testing.T, err error) {
	t.Helper()
	if _, ok := err.(RequestError); !ok || !strings.HasPrefix(err.Error(), "Invalid request: ") {
		t.Fatalf("rejection %T %q is not a client error", err, err)
	}
}
