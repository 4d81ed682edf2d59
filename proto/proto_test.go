package proto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFrameRoundTrip(t *testing.T) {
	var stream []byte
	stream = AppendFrame(stream, TypeOpen, []byte(`{"terminalId":"a"}`))
	stream = AppendDataFrame(stream, TypeOutput, "a", []byte("hello"))
	stream = AppendFrame(stream, TypeClose, nil)
	r := NewReader(bytes.NewReader(stream))

	f, err := r.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, TypeOpen, f.Type)
	assert.Equal(t, `{"terminalId":"a"}`, string(f.Body))

	f, err = r.ReadFrame()
	require.NoError(t, err)
	id, data, err := ParseData(f.Body)
	require.NoError(t, err)
	assert.Equal(t, "a", id)
	assert.Equal(t, "hello", string(data))

	f, err = r.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, TypeClose, f.Type)
	assert.Empty(t, f.Body)

	_, err = r.ReadFrame()
	assert.Equal(t, io.EOF, err)
}

func TestReadFrameRejectsCorruptStreams(t *testing.T) {
	cases := map[string]struct {
		stream []byte
		want   string
	}{
		"zero length":      {[]byte{0, 0, 0, 0, 1}, "zero frame length"},
		"oversized":        {[]byte{1, 0, 0, 1, 1}, "exceeds"},
		"truncated header": {[]byte{3, 0}, "inside a frame header"},
		"truncated body":   {[]byte{9, 0, 0, 0, 1, '{'}, "inside an OPEN frame"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(c.stream)).ReadFrame()
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrCorrupt), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestReadFrameAcceptsTheLargestFrame(t *testing.T) {
	body := make([]byte, MaxFrame-1)
	r := NewReader(bytes.NewReader(AppendFrame(nil, TypeInput, body)))
	f, err := r.ReadFrame()
	require.NoError(t, err)
	assert.Len(t, f.Body, MaxFrame-1)
}

func TestReuseBufferReadsWithoutAllocating(t *testing.T) {
	var stream []byte
	bodies := [][]byte{[]byte("first"), bytes.Repeat([]byte("x"), 100<<10), []byte("again")}
	for _, b := range bodies {
		stream = AppendFrame(stream, 0x7f, b)
	}
	// A small read buffer makes the 100 KiB body take the copying path.
	r := NewReader(bufio.NewReaderSize(bytes.NewReader(stream), 64<<10))
	r.ReuseBuffer()
	for _, want := range bodies {
		f, err := r.ReadFrame()
		require.NoError(t, err)
		assert.Equal(t, want, f.Body)
	}
	_, err := r.ReadFrame()
	assert.Equal(t, io.EOF, err)

	frame := AppendFrame(nil, TypeOutput, bytes.Repeat([]byte("y"), 1000))
	loop := &repeatReader{b: frame}
	r = NewReader(loop)
	r.ReuseBuffer()
	allocs := testing.AllocsPerRun(1000, func() {
		if f, err := r.ReadFrame(); err != nil || len(f.Body) != 1000 {
			t.Fatalf("ReadFrame: %v, %d bytes", err, len(f.Body))
		}
	})
	assert.Zero(t, allocs)
}

// repeatReader yields b over and over.
type repeatReader struct {
	b   []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

func TestParseData(t *testing.T) {
	good, err := DataBody("term", []byte{0, 1, 2})
	require.NoError(t, err)
	id, data, err := ParseData(good)
	require.NoError(t, err)
	assert.Equal(t, "term", id)
	assert.Equal(t, []byte{0, 1, 2}, data)

	for name, body := range map[string][]byte{
		"empty":         nil,
		"one byte":      {1},
		"zero id":       {0, 0, 'x'},
		"short id":      {5, 0, 'a', 'b'},
		"invalid utf-8": {1, 0, 0xff},
	} {
		_, _, err := ParseData(body)
		assert.ErrorIs(t, err, ErrBadData, name)
	}
	_, err = DataBody("", nil)
	assert.Error(t, err)
	_, err = DataBody(strings.Repeat("x", MaxID+1), nil)
	assert.Error(t, err)
}

func TestParseOpen(t *testing.T) {
	o, err := ParseOpen([]byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh","args":["-c","x"],"cwd":null,"env":{"A":"1"},"credit":null,"future":true}`))
	require.NoError(t, err)
	assert.Equal(t, Open{TerminalID: "t", Cols: 80, Rows: 24, Cmd: "sh", Args: []string{"-c", "x"}, Env: map[string]string{"A": "1"}}, o)

	o, err = ParseOpen([]byte(`{"terminalId":"t","cols":0,"rows":65535,"cmd":"sh","cwd":"/tmp","credit":18446744073709551615}`))
	require.NoError(t, err)
	assert.Equal(t, "/tmp", *o.Cwd)
	assert.Equal(t, uint64(18446744073709551615), *o.Credit)
	assert.EqualValues(t, 65535, o.Rows)

	bad := []struct{ body, id, want string }{
		{`{"terminalId":"t","cols":-1,"rows":24,"cmd":"sh"}`, "t", "cols"},
		{`{"terminalId":"t","cols":1.5,"rows":24,"cmd":"sh"}`, "t", "cols"},
		{`{"terminalId":"t","cols":80,"rows":65536,"cmd":"sh"}`, "t", "rows"},
		{`{"terminalId":"t","cols":80,"cmd":"sh"}`, "t", "missing rows"},
		{`{"terminalId":"t","cols":80,"rows":24,"cmd":""}`, "t", "cmd is empty"},
		{`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh","args":"x"}`, "t", "malformed"},
		{`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh","env":{"A":1}}`, "t", "malformed"},
		{`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh","credit":-5}`, "t", "credit"},
		{`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh"} trailing`, "t", "trailing"},
		{`{"terminalId":"","cols":80,"rows":24,"cmd":"sh"}`, "", "empty"},
		{`{"terminalId":7,"cols":80,"rows":24,"cmd":"sh"}`, "", "malformed"},
		{`[1,2]`, "", "malformed"},
		{`{"cols":80,"terminalId":"late","rows":`, "late", "malformed"},
	}
	for _, c := range bad {
		o, err := ParseOpen([]byte(c.body))
		require.Error(t, err, c.body)
		assert.Contains(t, err.Error(), c.want, c.body)
		assert.Equal(t, c.id, o.TerminalID, c.body)
	}
}

func TestRecoverID(t *testing.T) {
	cases := map[string]string{
		`{"terminalId":"x"`: "x",
		`{"a":{"b":[1,{"terminalId":"no"}]},"terminalId":"yes",`: "yes",
		`{"a":"unterminated`: "",
		`not json`:           "",
		`{"terminalId":5}`:   "",
		`{"terminalId":""}`:  "",
	}
	for body, want := range cases {
		assert.Equal(t, want, RecoverID([]byte(body)), body)
	}
}

func TestControlBodiesAreCompact(t *testing.T) {
	code := 0
	assert.Equal(t, `{"exitCode":0,"terminalId":"a"}`, string(Marshal(Exit{TerminalID: "a", ExitCode: &code})))
	assert.Equal(t, `{"exitCode":null,"terminalId":"a"}`, string(Marshal(Exit{TerminalID: "a"})))
	assert.Equal(t, `{"pid":1,"terminalId":"a"}`, string(Marshal(Opened{TerminalID: "a", PID: 1})))
	assert.Equal(t, `{"message":"m","terminalId":"a"}`, string(Marshal(Error{TerminalID: "a", Message: "m"})))
}

func TestParseControlBodies(t *testing.T) {
	r, err := ParseResize([]byte(`{"terminalId":"a","cols":1,"rows":2}`))
	require.NoError(t, err)
	assert.Equal(t, Resize{TerminalID: "a", Cols: 1, Rows: 2}, r)
	c, err := ParseCredit([]byte(`{"terminalId":"a","bytes":10}`))
	require.NoError(t, err)
	assert.Equal(t, Credit{TerminalID: "a", Bytes: 10}, c)
	_, err = ParseCredit([]byte(`{"terminalId":"a","bytes":-1}`))
	assert.Error(t, err)
	_, err = ParseClose([]byte(`{`))
	assert.Error(t, err)
}

// TestParseResizeNeedsBothSizes: a RESIZE missing a size, or with one that
// is not a u16, is malformed (and so ignored), not a resize to 0.
func TestParseResizeNeedsBothSizes(t *testing.T) {
	r, err := ParseResize([]byte(`{"terminalId":"r","cols":100,"rows":30}`))
	if err != nil || r != (Resize{TerminalID: "r", Cols: 100, Rows: 30}) {
		t.Fatalf("a good RESIZE: %+v, %v", r, err)
	}
	for body, want := range map[string]string{
		`{"terminalId":"r","cols":100}`:             "malformed RESIZE: missing rows",
		`{"terminalId":"r","rows":30,"cols":null}`:  "malformed RESIZE: missing cols",
		`{"terminalId":"r","cols":100,"rows":1.5}`:  "malformed RESIZE: rows: 1.5 is not a whole number in 0..65535",
		`{"terminalId":"r","cols":70000,"rows":30}`: "malformed RESIZE: cols: 70000 is larger than 65535",
		`{"terminalId":"r"`:                         "malformed RESIZE: unexpected end of JSON input",
	} {
		if _, err := ParseResize([]byte(body)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestMarshalKeepsStrings: ids and messages go out byte for byte, with no
// HTML escaping of <, > and &.
func TestMarshalKeepsStrings(t *testing.T) {
	got := string(Marshal(Error{TerminalID: "a<b>&c", Message: "x & y"}))
	if want := `{"message":"x & y","terminalId":"a<b>&c"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPutDataHeaderMatchesDataBody(t *testing.T) {
	id, payload := "term-7", []byte("hello")
	frame := make([]byte, DataHeaderSize(len(id))+len(payload))
	copy(frame[DataHeaderSize(len(id)):], payload)
	PutDataHeader(frame, TypeOutput, id)
	body, err := DataBody(id, payload)
	if err != nil {
		t.Fatal(err)
	}
	if want := AppendFrame(nil, TypeOutput, body); string(frame) != string(want) {
		t.Fatalf("PutDataHeader built %q, want %q", frame, want)
	}
}

// What no child can be started with is refused by name, with the reason:
// a NUL (a C string ends there) in cmd, an argument, cwd or env, an
// environment name that is empty or holds '=' (it gave the child ZZ=B=v,
// which it reads as ZZ set to "B=v").
func TestParseOpenRefusesWhatNoChildCanTake(t *testing.T) {
	open := func(extra string) []byte {
		return []byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh"` + extra + `}`)
	}
	bad := []struct{ extra, want string }{
		{`,"env":{"ZZ=B":"v"}`, `malformed OPEN: env: invalid environment variable name "ZZ=B": it has "=", which ends a name`},
		{`,"env":{"=C:":"v"}`, `invalid environment variable name "=C:"`},
		{`,"env":{"":"v"}`, `malformed OPEN: env: invalid environment variable name "": it is empty`},
		{`,"env":{"A\u0000B":"v"}`, `malformed OPEN: env: invalid environment variable name "A\x00B": it has a NUL byte`},
		{`,"env":{"OK":"1","A":"v\u0000w"}`, `malformed OPEN: env: the value of "A" has a NUL byte (at byte 1), which no environment variable can hold`},
		{`,"env":{"B=":"1","A=":"2"}`, `name "A="`},
		{`,"cmd":"s\u0000h"`, `malformed OPEN: cmd "s\x00h" has a NUL byte (at byte 1), which no program's name can hold`},
		{`,"args":["-c","tr\u0000ue"]`, `malformed OPEN: args[1] "tr\x00ue" has a NUL byte (at byte 2), which no argument can hold`},
		{`,"cwd":"/t\u0000mp"`, `malformed OPEN: cwd "/t\x00mp" has a NUL byte (at byte 2), which no path can hold`},
	}
	if runtime.GOOS == "windows" {
		bad = slices.Delete(bad, 1, 2) // "=C:" is a drive's directory there
	}
	for _, c := range bad {
		body := open(c.extra)
		if strings.HasPrefix(c.extra, `,"cmd"`) {
			body = []byte(`{"terminalId":"t","cols":80,"rows":24` + c.extra + `}`)
		}
		o, err := ParseOpen(body)
		require.Error(t, err, c.extra)
		assert.Contains(t, err.Error(), c.want, c.extra)
		assert.Equal(t, "t", o.TerminalID, "refused under its id")
	}
	// Values may be empty and hold '=', controls other than NUL are
	// the program's business.
	_, err := ParseOpen(open(`,"env":{"A":"","B":"x=y","C":"\u001b[m"},"args":["\t"],"cwd":"/tmp"`))
	assert.NoError(t, err)
}

// A null among args or env values is no string: refused under the OPEN's
// id. Before, JSON decoded it as "", so the child got an empty argument
// or an empty variable that nobody sent. A null for the whole field is
// still the field left out.
func TestParseOpenRefusesNullStrings(t *testing.T) {
	open := func(extra string) []byte {
		return []byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"sh"` + extra + `}`)
	}
	for extra, want := range map[string]string{
		`,"args":["-c",null,"x"]`:      `malformed OPEN: args[1] is null, not a string`,
		`,"env":{"HOME":null,"A":"1"}`: `malformed OPEN: env: the value of "HOME" is null, not a string`,
		`,"env":{"B":null,"A":null}`:   `malformed OPEN: env: the value of "A" is null, not a string`,
	} {
		o, err := ParseOpen(open(extra))
		require.Error(t, err, extra)
		assert.Equal(t, want, err.Error(), extra)
		assert.Equal(t, "t", o.TerminalID, "refused under its id")
	}
	o, err := ParseOpen(open(`,"args":null,"env":null`))
	require.NoError(t, err)
	assert.Nil(t, o.Args)
	assert.Nil(t, o.Env)
	o, err = ParseOpen(open(`,"args":[],"env":{}`))
	require.NoError(t, err)
	assert.Empty(t, o.Args)
	assert.Empty(t, o.Env)
}

// commandLine (Windows' verbatim command line after the program) is one
// string, never beside args, with no NUL and valid UTF-8 as sent, like the
// other launch strings; where children take an argument vector it is
// refused, under the OPEN's id, saying what to give instead. Empty or null
// is the field left out.
func TestParseOpenCommandLine(t *testing.T) {
	open := func(extra string) []byte {
		return []byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"cmd.exe"` + extra + `}`)
	}
	bad := map[string]string{
		`,"commandLine":"/c echo \"a b\"","args":["/c"]`:     `malformed OPEN: commandLine and args cannot both be given`,
		`,"args":["/c"],"commandLine":"/c"`:                  `malformed OPEN: commandLine and args cannot both be given`,
		`,"commandLine":5`:                                   `malformed OPEN: commandLine is a number, not a string`,
		`,"commandLine":["/c","x"]`:                          `malformed OPEN: commandLine is an array, not a string`,
		`,"commandLine":"/c a\u0000b"`:                       `malformed OPEN: commandLine "/c a\x00b" has a NUL byte (at byte 4), which no command line can hold`,
		`,"commandLine":"/c ` + "\xff" + `"`:                 `malformed OPEN: commandLine is not valid UTF-8 (byte 0xff at offset 3 of its JSON string)`,
		`,"commandLine":"/c \ud800"`:                         `malformed OPEN: commandLine is not valid UTF-8 (the escape \ud800 is half of a surrogate pair)`,
		`,"commandLine":"/c echo \"a b\"","env":{"A=B":"v"}`: `malformed OPEN: env: invalid environment variable name "A=B"`,
	}
	if runtime.GOOS != "windows" {
		bad[`,"commandLine":"/c echo \"a b\""`] = `commandLine is only for Windows: give args`
	}
	for extra, want := range bad {
		o, err := ParseOpen(open(extra))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", extra, err, want)
		}
		if o.TerminalID != "t" {
			t.Errorf("%s: refused under %q", extra, o.TerminalID)
		}
		// The servers' shared decode answers under the same id.
		_, err = Decode(Frame{TypeOpen, open(extra)})
		var de *DecodeError
		if !errors.As(err, &de) || de.ID != "t" || !de.HasID || !strings.HasPrefix(de.Error(), want) {
			t.Errorf("Decode %s: %#v", extra, err)
		}
	}
	for _, extra := range []string{`,"commandLine":""`, `,"commandLine":null`, `,"commandLine":"","args":["-c","x"]`} {
		o, err := ParseOpen(open(extra))
		if err != nil || o.CommandLine != "" {
			t.Errorf("%s: %+v, %v (the field left out)", extra, o, err)
		}
	}
	o, err := ParseOpen(open(`,"commandLine":"/c \"\"C:\\a b\\p.exe\" 5\" é","args":[]`))
	if runtime.GOOS == "windows" {
		if err != nil || o.CommandLine != `/c ""C:\a b\p.exe" 5" é` || len(o.Args) != 0 {
			t.Fatalf("taken as it is on Windows: %+v, %v", o, err)
		}
	} else if err == nil || err.Error() != "commandLine is only for Windows: give args" {
		t.Fatalf("with empty args, on %s: %v", runtime.GOOS, err)
	}
}

// OPENED and HELLO list commandLine where it is served: on Windows, by the
// plain sidecar (the persistent server runs on Unix only).
func TestCommandLineListedOnWindowsOnly(t *testing.T) {
	win := runtime.GOOS == "windows"
	for name, fs := range map[string][]string{"Features": Features, "HelloFeatures": HelloFeatures} {
		if slices.Contains(fs, FeatureCommandLine) != win {
			t.Errorf("%s %v on %s", name, fs, runtime.GOOS)
		}
	}
	for name, fs := range map[string][]string{"PersistFeatures": PersistFeatures, "PersistHelloFeatures": PersistHelloFeatures} {
		if slices.Contains(fs, FeatureCommandLine) {
			t.Errorf("%s %v", name, fs)
		}
	}
}

// A field of the wrong JSON type is refused in the protocol's words,
// naming the field, what it was and what it takes: the text reaches the
// host in an ERROR, and encoding/json's names ("Go struct field
// openWire.args of type []*string") are ours, not the host's.
func TestWrongTypesNamedInProtocolTerms(t *testing.T) {
	open := func(extra string) []byte {
		return []byte(`{"terminalId":"t","cols":80,"rows":24,"cmd":"/bin/sh"` + extra + `}`)
	}
	cases := map[string]string{
		`,"cmd":5`:                 `malformed OPEN: cmd is a number, not a string`,
		`,"cwd":{"a":1}`:           `malformed OPEN: cwd is an object, not a string`,
		`,"args":"-c"`:             `malformed OPEN: args is a string, not an array of strings`,
		`,"args":["-c",7]`:         `malformed OPEN: args holds a number, not only strings`,
		`,"env":["A=1"]`:           `malformed OPEN: env is an array, not an object of strings`,
		`,"env":{"A":true}`:        `malformed OPEN: env has true or false among its values, not only strings`,
		`,"utf8":"yes"`:            `malformed OPEN: utf8 is a string, not true or false`,
		`,"nodePtyTermios":1`:      `malformed OPEN: nodePtyTermios is a number, not true or false`,
		`,"commandLine":["/c"]`:    `malformed OPEN: commandLine is an array, not a string`,
		`,"env":{"A":"1","B":[2]}`: `malformed OPEN: env has an array among its values, not only strings`,
	}
	for extra, want := range cases {
		o, err := ParseOpen(open(extra))
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", extra, err, want)
		}
		if o.TerminalID != "t" {
			t.Errorf("%s: refused under %q, not the OPEN's id", extra, o.TerminalID)
		}
	}
	if _, err := ParseOpen([]byte(`[1]`)); err == nil || err.Error() != `malformed OPEN: the body is an array, not a JSON object` {
		t.Errorf("array body: %v", err)
	}
	if _, err := ParseResize([]byte(`{"terminalId":5,"cols":1,"rows":1}`)); err == nil || err.Error() != `malformed RESIZE: terminalId is a number, not a string` {
		t.Errorf("RESIZE: %v", err)
	}
	if _, err := ParseCredit([]byte(`{"terminalId":"t","bytes":"9"}`)); err == nil || err.Error() != `malformed CREDIT: bytes is a string, not a number` {
		t.Errorf("CREDIT: %v", err)
	}
}

// TestPingNow: only a body that is a JSON object with "now": true asks
// for its PONG as soon as the PING is read.
func TestPingNow(t *testing.T) {
	for body, want := range map[string]bool{
		`{"seq":1,"now":true}`: true,
		` { "now" : true } `:   true,
		`{"seq":1}`:            false,
		`{"now":false}`:        false,
		`{"now":1}`:            false,
		`{"now":"true"}`:       false,
		`{"seq":"now"}`:        false,
		`["now",true]`:         false,
		`{"now":true`:          false,
		``:                     false,
		`{"now":true,"pad":"` + strings.Repeat("x", MaxPingBody) + `"}`: false,
	} {
		if got := PingNow([]byte(body)); got != want {
			t.Errorf("PingNow(%q) = %v, want %v", body, got, want)
		}
	}
	if got := string(PongFrame([]byte(`{"seq":1,"now":true}`))[5:]); got != `{"seq":1,"now":true}` {
		t.Errorf("a PONG echoes the PING's body: %q", got)
	}
}
