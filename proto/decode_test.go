package proto

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeEveryType(t *testing.T) {
	u16 := func(n uint64) *uint64 { return &n }
	input, err := DataBody("a", []byte("ls\r"))
	require.NoError(t, err)
	// An absolute path as this platform spells it (C:\... on Windows).
	abs, err := filepath.Abs(filepath.Join("bin", "x"))
	require.NoError(t, err)
	absJSON, _ := json.Marshal(abs)
	cases := []struct {
		name string
		f    Frame
		want Msg
	}{
		{"open", Frame{TypeOpen, []byte(`{"terminalId":"a","cols":80,"rows":24,"cmd":"sh","credit":5,"utf8":true,"nodePtyTermios":true}`)},
			OpenRequest{Open: Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "sh", Credit: u16(5), UTF8: true, NodePtyTermios: true}}},
		{"input", Frame{TypeInput, input}, Input{TerminalID: "a", Data: []byte("ls\r")}},
		{"input empty", Frame{TypeInput, []byte{1, 0, 'a'}}, Input{TerminalID: "a", Data: []byte{}}},
		{"resize", Frame{TypeResize, []byte(`{"terminalId":"a","cols":100,"rows":30}`)}, Resize{TerminalID: "a", Cols: 100, Rows: 30}},
		{"resize pixels", Frame{TypeResize, []byte(`{"terminalId":"a","cols":100,"rows":30,"pixelWidth":1000,"pixelHeight":null}`)},
			Resize{TerminalID: "a", Cols: 100, Rows: 30, PixelWidth: 1000}},
		{"close", Frame{TypeClose, []byte(`{"terminalId":"a"}`)}, Close{TerminalID: "a"}},
		{"credit", Frame{TypeCredit, []byte(`{"terminalId":"a","bytes":4096}`)}, Credit{TerminalID: "a", Bytes: 4096}},
		{"signal name", Frame{TypeSignal, []byte(`{"terminalId":"a","signal":"INT"}`)}, Signal{TerminalID: "a", Signal: "INT"}},
		{"signal number", Frame{TypeSignal, []byte(`{"terminalId":"a","signal":2}`)}, Signal{TerminalID: "a", Signal: "2"}},
		{"foreground", Frame{TypeForeground, []byte(`{"terminalId":"a"}`)}, Foreground{TerminalID: "a"}},
		{"hello", Frame{TypeHello, []byte(`{"version":"v","protocol":1,"features":["x"]}`)}, Hello{Version: "v", Protocol: 1, Features: []string{"x"}}},
		{"hello with env", Frame{TypeHello, []byte(`{"version":"v","protocol":1,"features":["x"],"env":["A=1","B=x=y"]}`)}, Hello{Version: "v", Protocol: 1, Features: []string{"x"}, Env: []string{"A=1", "B=x=y"}}},
		{"hello with cwd", Frame{TypeHello, []byte(`{"protocol":1,"cwd":"/work/a b"}`)}, Hello{Protocol: 1, Cwd: "/work/a b"}},
		{"ping", Frame{TypePing, []byte(`{"n":1}`)}, Ping{Body: []byte(`{"n":1}`)}},
		{"list", Frame{TypeList, nil}, List{}},
		{"attach", Frame{TypeAttach, []byte(`{"terminalId":"a","offset":10,"credit":7}`)}, Attach{TerminalID: "a", Offset: 10, Credit: u16(7)}},
		{"detach", Frame{TypeDetach, []byte(`{"terminalId":"a"}`)}, Detach{TerminalID: "a"}},
		{"stop", Frame{TypeStop, nil}, Stop{}},
		{"stop {}", Frame{TypeStop, []byte(`{}`)}, Stop{}},
		{"stop object", Frame{TypeStop, []byte(` {"why":"upgrade"} `)}, Stop{}},
		{"upgrade", Frame{TypeUpgrade, []byte(`{"path":` + string(absJSON) + `,"version":"2"}`)}, Upgrade{Path: abs, Version: "2"}},
		{"revive", Frame{TypeRevive, []byte(`{"terminalId":"a","credit":7}`)}, Revive{TerminalID: "a", Credit: u16(7)}},
		{"revive unthrottled", Frame{TypeRevive, []byte(`{"terminalId":"a"}`)}, Revive{TerminalID: "a"}},
		{"unknown", Frame{0x3f, []byte("anything")}, Unknown{Type: 0x3f}},
		{"unknown sidecar-bound", Frame{TypeOutput, []byte("x")}, Unknown{Type: TypeOutput}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.f)
			require.NoError(t, err)
			if o, ok := m.(OpenRequest); ok {
				o.journal, o.detached = nil, nil // compared through Persist below
				m = o
			}
			assert.Equal(t, c.want, m)
			assert.Equal(t, c.f.Type, m.FrameType())
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	long := make([]byte, MaxID+1)
	for i := range long {
		long[i] = 'x'
	}
	cases := []struct {
		name  string
		f     Frame
		id    string
		hasID bool
		msg   string
	}{
		{"open not json", Frame{TypeOpen, []byte(`{"terminalId":"a","cols":`)}, "a", true, "malformed OPEN: unexpected EOF"},
		{"open trailing", Frame{TypeOpen, []byte(`{"terminalId":"a","cols":1,"rows":1,"cmd":"sh"} x`)}, "a", true, "malformed OPEN: trailing data after the JSON object"},
		{"open no id", Frame{TypeOpen, []byte(`{"cols":1,"rows":1,"cmd":"sh"}`)}, "", false, "malformed OPEN: missing terminalId"},
		{"open empty id", Frame{TypeOpen, []byte(`{"terminalId":"","cols":1,"rows":1,"cmd":"sh"}`)}, "", true, "malformed OPEN: terminal id is empty"},
		{"open long id", Frame{TypeOpen, []byte(`{"terminalId":"` + string(long) + `","cols":1,"rows":1,"cmd":"sh"}`)}, string(long), true, ""},
		{"open bad cols", Frame{TypeOpen, []byte(`{"terminalId":"a","cols":1.5,"rows":1,"cmd":"sh"}`)}, "a", true, "malformed OPEN: cols: 1.5 is not a whole number in 0..65535"},
		{"open no cmd", Frame{TypeOpen, []byte(`{"terminalId":"a","cols":1,"rows":1}`)}, "a", true, "malformed OPEN: missing cmd"},
		{"open bad credit", Frame{TypeOpen, []byte(`{"terminalId":"a","cols":1,"rows":1,"cmd":"sh","credit":-1}`)}, "a", true, "malformed OPEN: credit: -1 is not a whole number in 0..18446744073709551615"},
		{"input short", Frame{TypeInput, []byte{1}}, "", false, "malformed data frame: body of 1 bytes has no id length"},
		{"input no id", Frame{TypeInput, []byte{0, 0, 'x'}}, "", false, "malformed data frame: empty terminal id"},
		{"resize no rows", Frame{TypeResize, []byte(`{"terminalId":"a","cols":80}`)}, "a", true, "malformed RESIZE: missing rows"},
		{"resize bad pixels", Frame{TypeResize, []byte(`{"terminalId":"a","cols":80,"rows":24,"pixelHeight":-1}`)}, "a", true, "malformed RESIZE: pixelHeight: -1 is not a whole number in 0..65535"},
		{"resize not json", Frame{TypeResize, []byte(`[`)}, "", false, ""},
		{"close not json", Frame{TypeClose, []byte(`{"terminalId":1}`)}, "", false, ""},
		{"credit negative", Frame{TypeCredit, []byte(`{"terminalId":"a","bytes":-1}`)}, "a", true, ""},
		{"signal missing", Frame{TypeSignal, []byte(`{"terminalId":"a"}`)}, "a", true, "malformed SIGNAL: missing signal"},
		{"signal broken json", Frame{TypeSignal, []byte(`{"terminalId":"a","signal":`)}, "a", true, ""},
		{"signal big number", Frame{TypeSignal, []byte(`{"terminalId":"a","signal":300}`)}, "a", true, "malformed SIGNAL: signal 300 is neither a name nor a number in 1..64"},
		{"foreground not json", Frame{TypeForeground, []byte(`{`)}, "", false, ""},
		{"hello not json", Frame{TypeHello, []byte(`x`)}, "", false, ""},
		{"attach no offset", Frame{TypeAttach, []byte(`{"terminalId":"a"}`)}, "a", true, "malformed ATTACH: offset: missing (the count of bytes already received, 0 or more)"},
		{"attach float offset", Frame{TypeAttach, []byte(`{"terminalId":"a","offset":1e3}`)}, "a", true, "malformed ATTACH: offset: 1e3 is not a whole number of bytes (the count of bytes already received, 0 or more)"},
		{"attach bad credit", Frame{TypeAttach, []byte(`{"terminalId":"a","offset":0,"credit":"x"}`)}, "a", true, `malformed ATTACH: credit: "x" is not a whole number of bytes`},
		{"attach broken json", Frame{TypeAttach, []byte(`{"terminalId":"a","offset":`)}, "a", true, `malformed ATTACH: want {"terminalId": ..., "offset": N}`},
		{"detach broken json", Frame{TypeDetach, []byte(`{"terminalId":"a",`)}, "a", true, `malformed DETACH: want {"terminalId": ...}`},
		{"detach no id", Frame{TypeDetach, []byte(`[]`)}, "", false, `malformed DETACH: want {"terminalId": ...}`},
		{"upgrade relative", Frame{TypeUpgrade, []byte(`{"path":"bin/x"}`)}, "", false, `malformed UPGRADE: want {"path": "/absolute/path/of/the/new/binary", "version": ...}`},
		{"revive no id", Frame{TypeRevive, []byte(`{}`)}, "", false, `malformed REVIVE: want {"terminalId": ...}`},
		{"revive bad credit", Frame{TypeRevive, []byte(`{"terminalId":"a","credit":-1}`)}, "a", true, "malformed REVIVE: credit: -1 is not a whole number of bytes"},
		{"stop not json", Frame{TypeStop, []byte(`garbage`)}, "", false, "malformed STOP: want {} (a JSON object) or no body"},
		{"stop array", Frame{TypeStop, []byte(`[]`)}, "", false, "malformed STOP: want {} (a JSON object) or no body"},
		{"stop null", Frame{TypeStop, []byte(`null`)}, "", false, "malformed STOP: want {} (a JSON object) or no body"},
		{"upgrade not json", Frame{TypeUpgrade, nil}, "", false, `malformed UPGRADE: want {"path": "/absolute/path/of/the/new/binary", "version": ...}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.f)
			require.Error(t, err)
			assert.Nil(t, m)
			var de *DecodeError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, c.f.Type, de.Type)
			assert.Equal(t, c.id, de.ID)
			assert.Equal(t, c.hasID, de.HasID)
			if c.msg != "" {
				assert.Equal(t, c.msg, err.Error())
			}
			assert.NotNil(t, errors.Unwrap(err))
		})
	}
}

// Decode must say exactly what the Parse functions it stands for say, so
// that moving a server onto it changes no ERROR's text.
func TestDecodeErrorTextIsTheParsers(t *testing.T) {
	body := []byte(`{"terminalId":"a","cols":"x","rows":1,"cmd":"sh"}`)
	_, want := ParseOpen(body)
	_, err := Decode(Frame{TypeOpen, body})
	assert.EqualError(t, err, want.Error())
	body = []byte(`{"terminalId":"a","signal":[]}`)
	_, want = ParseSignal(body)
	_, err = Decode(Frame{TypeSignal, body})
	assert.EqualError(t, err, want.Error())
}

func TestOpenRequestPersist(t *testing.T) {
	decode := func(body string) OpenRequest {
		m, err := Decode(Frame{TypeOpen, []byte(body)})
		require.NoError(t, err)
		return m.(OpenRequest)
	}
	const base = `"terminalId":"a","cols":1,"rows":1,"cmd":"sh"`
	p, err := decode(`{` + base + `}`).Persist(100)
	require.NoError(t, err)
	assert.Equal(t, OpenPersist{}, p)
	p, err = decode(`{` + base + `,"journal":100,"detached":"park"}`).Persist(100)
	require.NoError(t, err)
	assert.Equal(t, OpenPersist{Journal: 100, Park: true}, p)
	p, err = decode(`{` + base + `,"journal":null,"detached":"ring"}`).Persist(100)
	require.NoError(t, err)
	assert.Equal(t, OpenPersist{}, p)
	// A detached that is not a string is ignored, as it always was.
	p, err = decode(`{` + base + `,"detached":5}`).Persist(100)
	require.NoError(t, err)
	assert.Equal(t, OpenPersist{}, p)
	for body, msg := range map[string]string{
		`{` + base + `,"journal":101}`:       "malformed OPEN: journal must be a whole number of bytes in 1..100, not 101",
		`{` + base + `,"journal":0}`:         "malformed OPEN: journal must be a whole number of bytes in 1..100, not 0",
		`{` + base + `,"journal":"1"}`:       `malformed OPEN: journal must be a whole number of bytes in 1..100, not "1"`,
		`{` + base + `,"detached":"float"}`:  `malformed OPEN: detached must be "ring" or "park", not "float"`,
		`{` + base + `,"journal":1.0}`:       "malformed OPEN: journal must be a whole number of bytes in 1..100, not 1.0",
		`{` + base + `,"detached":"PARK"}`:   `malformed OPEN: detached must be "ring" or "park", not "PARK"`,
		`{` + base + `,"journal":-5}`:        "malformed OPEN: journal must be a whole number of bytes in 1..100, not -5",
		`{` + base + `,"journal":{"a":1}}`:   `malformed OPEN: journal must be a whole number of bytes in 1..100, not {"a":1}`,
		`{` + base + `,"journal":1e2}`:       "malformed OPEN: journal must be a whole number of bytes in 1..100, not 1e2",
		`{` + base + `,"detached":""}`:       `malformed OPEN: detached must be "ring" or "park", not ""`,
		`{` + base + `,"journal":100000000}`: "malformed OPEN: journal must be a whole number of bytes in 1..100, not 100000000",
	} {
		_, err := decode(body).Persist(100)
		assert.EqualError(t, err, msg, body)
	}
}

// FuzzDecode checks that Decode never panics, that every error is a
// *DecodeError of the frame's type, and that a recovered id is a string
// the body contains.
func FuzzDecode(f *testing.F) {
	for _, typ := range []Type{TypeOpen, TypeInput, TypeResize, TypeSignal, TypeAttach, TypeDetach, TypeUpgrade, 0x7f} {
		f.Add(byte(typ), []byte(`{"terminalId":"a","offset":1}`))
	}
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		m, err := Decode(Frame{Type: Type(typ), Body: body})
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Type != Type(typ) || m != nil {
				t.Fatalf("Decode(%#x, %q) = %v, %v", typ, body, m, err)
			}
			return
		}
		if m.FrameType() != Type(typ) {
			t.Fatalf("Decode(%#x) gave a %T of type %#x", typ, m, m.FrameType())
		}
	})
}

// An id that is not UTF-8 as sent (a stray byte, half a surrogate pair)
// decodes to U+FFFD: taken as it decodes, it would be another id than
// the host's. Every frame that names one refuses it; the requests a
// server answers name the id as decoded, the only string JSON can carry
// back, and the rest none (their refusal is only logged).
func TestDecodeRefusesIDsNotUTF8(t *testing.T) {
	open := func(id string) []byte {
		return []byte(`{"terminalId":"` + id + `","cols":80,"rows":24,"cmd":"cat"}`)
	}
	cases := []struct {
		name  string
		f     Frame
		id    string
		hasID bool
		msg   string
	}{
		{"open byte", Frame{TypeOpen, open("t\xff")}, "t\ufffd", true, "malformed OPEN: terminal id is not valid UTF-8 (byte 0xff at offset 1 of its JSON string)"},
		{"open cut character", Frame{TypeOpen, open("\xe2\x82")}, "\ufffd\ufffd", true, "malformed OPEN: terminal id is not valid UTF-8 (byte 0xe2 at offset 0 of its JSON string)"},
		{"open encoded surrogate", Frame{TypeOpen, open("\xed\xa0\x80")}, "\ufffd\ufffd\ufffd", true, ""},
		{"open lone high surrogate", Frame{TypeOpen, open(`a\ud800b`)}, "a\ufffdb", true, `malformed OPEN: terminal id is not valid UTF-8 (the escape \ud800 is half of a surrogate pair)`},
		{"open lone low surrogate", Frame{TypeOpen, open(`\uDC00`)}, "\ufffd", true, `malformed OPEN: terminal id is not valid UTF-8 (the escape \uDC00 is half of a surrogate pair)`},
		{"open high then not low", Frame{TypeOpen, open(`\ud800\u0041`)}, "\ufffdA", true, ""},
		{"open the later of two ids", Frame{TypeOpen, []byte("{\"terminalId\":\"ok\",\"terminalId\":\"t\xfe\",\"cols\":80,\"rows\":24,\"cmd\":\"cat\"}")}, "t\ufffd", true, ""},
		{"attach", Frame{TypeAttach, []byte("{\"terminalId\":\"t\xff\",\"offset\":0}")}, "t\ufffd", true, "malformed ATTACH: terminal id is not valid UTF-8 (byte 0xff at offset 1 of its JSON string)"},
		{"detach", Frame{TypeDetach, []byte("{\"terminalId\":\"t\xff\"}")}, "t\ufffd", true, ""},
		{"revive", Frame{TypeRevive, []byte("{\"terminalId\":\"t\xff\"}")}, "t\ufffd", true, ""},
		{"resize", Frame{TypeResize, []byte("{\"terminalId\":\"t\xff\",\"cols\":80,\"rows\":24}")}, "", false, "malformed RESIZE: terminal id is not valid UTF-8 (byte 0xff at offset 1 of its JSON string)"},
		{"close", Frame{TypeClose, []byte("{\"terminalId\":\"t\xff\"}")}, "", false, ""},
		{"credit", Frame{TypeCredit, []byte("{\"terminalId\":\"t\xff\",\"bytes\":1}")}, "", false, ""},
		{"signal", Frame{TypeSignal, []byte("{\"terminalId\":\"t\xff\",\"signal\":\"INT\"}")}, "", false, ""},
		{"foreground", Frame{TypeForeground, []byte("{\"terminalId\":\"t\xff\"}")}, "", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.f)
			require.Error(t, err)
			assert.Nil(t, m)
			var de *DecodeError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, c.id, de.ID)
			assert.Equal(t, c.hasID, de.HasID)
			assert.Contains(t, err.Error(), "terminal id is not valid UTF-8")
			if c.msg != "" {
				assert.Equal(t, c.msg, err.Error())
			}
		})
	}
	// What is valid stays valid: characters outside ASCII, as bytes or
	// escaped, a surrogate pair, U+FFFD itself, and an environment value
	// with bytes that are not UTF-8 (the program and its arguments are
	// checked too, TestOpenRefusesLaunchStringsNotUTF8).
	for _, body := range []string{
		`{"terminalId":"été ✓","cols":80,"rows":24,"cmd":"cat"}`,
		`{"terminalId":"\u00e9\ud83d\ude00\ufffd�","cols":80,"rows":24,"cmd":"cat"}`,
		`{"terminalId":"\\ud800","cols":80,"rows":24,"cmd":"cat"}`,
		"{\"terminalId\":\"a\",\"cols\":80,\"rows\":24,\"cmd\":\"cat\",\"env\":{\"A\":\"c\xffat\"}}",
	} {
		_, err := Decode(Frame{TypeOpen, []byte(body)})
		assert.NoError(t, err, body)
	}
	_, err := ParseOpen(open("t\xff"))
	assert.ErrorContains(t, err, "terminal id is not valid UTF-8", "ParseOpen refuses it as Decode does")
}
