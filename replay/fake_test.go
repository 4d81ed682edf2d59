package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
)

// fakeSidecar writes a shell script that stands in for the sidecar: body
// runs after "exec" (so the script's pid is the program's).
func fakeSidecar(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-sidecar")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nexec "+body+"\n"), 0o755))
	return p
}

// noHostSteps is a recording in which the host only closes its stream and
// the sidecar sends nothing.
func noHostSteps(t *testing.T) *Fixture {
	f, err := Prepare("empty", []record.Record{{Kind: record.HostEOF}})
	require.NoError(t, err)
	return f
}

// A sidecar that breaks the protocol's promises about terminal lives and
// frame bodies is reported for each, even when the recording expects
// nothing of it.
func TestProtocolViolationsReported(t *testing.T) {
	var out []byte
	out = proto.AppendDataFrame(out, proto.TypeOutput, "early", []byte("before OPENED"))
	out = proto.AppendFrame(out, proto.TypeOpened, []byte(`{"terminalId":"twice","pid":1}`))
	out = proto.AppendFrame(out, proto.TypeOpened, []byte(`{"terminalId":"twice","pid":1}`))
	out = proto.AppendFrame(out, proto.TypeExit, []byte(`{"terminalId":"never","exitCode":0}`))
	out = proto.AppendFrame(out, proto.TypeError, []byte(`not json`))
	frames := filepath.Join(t.TempDir(), "frames")
	require.NoError(t, os.WriteFile(frames, out, 0o644))

	rep, err := Run(noHostSteps(t), Options{Sidecar: fakeSidecar(t, "cat "+frames), StepTimeout: 10 * time.Second})
	require.NoError(t, err)
	all := rep.String()
	for _, want := range []string{
		`protocol: terminal "early": OUTPUT while it is not open`,
		`protocol: terminal "twice": OPENED while already open`,
		`protocol: terminal "never": EXIT while it is not open`,
		`protocol: ERROR frame with a body that is not a JSON object: "not json"`,
		// Terminals the recording does not know are reported too.
		`terminal "early": not in the recording, but the sidecar sent 0 control frames and 13 output bytes for it`,
		`terminal "twice": not in the recording, but the sidecar sent 2 control frames and 0 output bytes for it`,
	} {
		assert.Contains(t, all, want)
	}
	assert.False(t, rep.OK())
}

// A sidecar whose output ends before it sent what the recording shows is
// reported as such at once, not after the step deadline.
func TestEndedSidecarReportedAtOnce(t *testing.T) {
	recs := []record.Record{
		{Kind: record.FromSidecar, Raw: proto.AppendFrame(nil, proto.TypeOpened, []byte(`{"terminalId":"a","pid":1}`))},
		{Kind: record.FromHost, Raw: proto.AppendFrame(nil, proto.TypeClose, []byte(`{"terminalId":"a"}`))},
		{Kind: record.HostEOF},
	}
	recs[0].Frame = proto.Frame{Type: proto.TypeOpened, Body: recs[0].Raw[proto.HeaderSize:]}
	f, err := Prepare("ended", recs)
	require.NoError(t, err)
	// An hour: were the end not noticed, the test would time out.
	rep, err := Run(f, Options{Sidecar: fakeSidecar(t, "true"), StepTimeout: time.Hour})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Mismatches)
	assert.Equal(t, `before host step 1 (CLOSE {"terminalId":"a"}): the sidecar's output ended: terminal "a" has 0 of 1 control frames and 0 of 0 output bytes`, rep.Mismatches[0])
	assert.Contains(t, rep.String(), `terminal "a": control frame 1: want OPENED, got nothing`)
}

// A sidecar that does not exit when its stdin closes is killed after the
// step timeout, and the report says so. sleep never exits on its own
// within the test, so the timeout is certain to pass first.
func TestSidecarThatDoesNotExitIsKilled(t *testing.T) {
	s, err := Start(fakeSidecar(t, "sleep 3600"), nil)
	require.NoError(t, err)
	err = s.Finish(50 * time.Millisecond)
	require.Error(t, err)
	assert.Equal(t, "sidecar did not exit within 50ms of its stdin closing", err.Error())
	select {
	case <-s.done:
	default:
		t.Fatal("Finish returned before the sidecar's output ended")
	}
}

// A sidecar that cannot be started is an error of Run, not a report.
func TestRunMissingSidecar(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-sidecar")
	rep, err := Run(noHostSteps(t), Options{Sidecar: missing})
	require.Error(t, err)
	assert.Nil(t, rep)
	assert.Contains(t, err.Error(), "no-such-sidecar")
}

// Recordings that cannot be replayed are refused with the record named.
func TestPrepareRefusesBadRecordings(t *testing.T) {
	host := record.Record{Kind: record.FromHost, Raw: proto.AppendFrame(nil, proto.TypeClose, []byte(`{"terminalId":"a"}`))}
	badOutput := record.Record{Kind: record.FromSidecar, Frame: proto.Frame{Type: proto.TypeOutput, Body: []byte{0}}}
	badControl := record.Record{Kind: record.FromSidecar, Frame: proto.Frame{Type: proto.TypeExit, Body: []byte("[1]")}}
	for _, c := range []struct {
		name string
		recs []record.Record
		want string
	}{
		{"host frame after EOF", []record.Record{{Kind: record.HostEOF}, host}, "x: record 1: host frame after the host closed its stream"},
		{"undecodable OUTPUT", []record.Record{badOutput}, "x: record 0: "},
		{"control body not an object", []record.Record{host, badControl}, "x: record 1: EXIT body: "},
		{"note not JSON", []record.Record{{Kind: record.Note, Raw: []byte("{")}}, "x: record 0: note: "},
		{"unknown output mode", []record.Record{{Kind: record.Note, Raw: []byte(`{"terminalId":"a","output":"fuzzy"}`)}}, `x: record 0: note for "a": unknown output mode "fuzzy"`},
	} {
		f, err := Prepare("x", c.recs)
		if assert.Error(t, err, c.name) {
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "%s: %v", c.name, err)
		}
		assert.Nil(t, f, c.name)
	}
}

// Load names the file it cannot read.
func TestLoadMissingFixture(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.fixture"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "absent.fixture")
}
