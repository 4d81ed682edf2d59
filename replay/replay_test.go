package replay

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"

	"github.com/ptyplex/ptyplex/internal/testing/buildtags"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

var sidecarBin string

const fixtures = "../testdata/fixtures"

func TestMain(m *testing.M) {
	finish := testproc.Start()
	os.Exit(finish(func() int {
		dir, err := os.MkdirTemp("", "ptyplex-replay-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		sidecarBin = filepath.Join(dir, "ptyplex-sidecar")
		build := exec.Command("go", append(append([]string{"build"}, buildtags.GoBuildArgs()...), "-o", sidecarBin, "github.com/ptyplex/ptyplex/cmd/ptyplex-sidecar")...)
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the sidecar:", err)
			return 1
		}
		return m.Run()
	}()))
}

func opts() Options { return Options{Sidecar: sidecarBin} }

// Every committed fixture replays green against the sidecar of this tree.
func TestFixturesReplay(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(fixtures, "*.fixture"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 10, "the fixtures are missing")
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".fixture"), func(t *testing.T) {
			t.Parallel()
			rep := Check(t, p, opts())
			t.Log(rep)
		})
	}
}

// tamper loads a fixture and rewrites the first sidecar frame of type typ
// for terminal id with edit.
func tamper(t *testing.T, name, id string, typ proto.Type, edit func(body []byte) []byte) *Fixture {
	t.Helper()
	recs, err := record.ReadFile(filepath.Join(fixtures, name))
	require.NoError(t, err)
	for i, r := range recs {
		if r.Kind != record.FromSidecar || r.Frame.Type != typ {
			continue
		}
		if typ == proto.TypeOutput {
			if got, _, _ := proto.ParseData(r.Frame.Body); got != id {
				continue
			}
		} else if !bytes.Contains(r.Frame.Body, []byte(`"terminalId":"`+id+`"`)) {
			continue
		}
		body := edit(bytes.Clone(r.Frame.Body))
		recs[i].Raw = proto.AppendFrame(nil, typ, body)
		recs[i].Frame = proto.Frame{Type: typ, Body: body}
		f, err := Prepare(name+" (tampered)", recs)
		require.NoError(t, err)
		return f
	}
	t.Fatalf("%s has no %s frame for %q", name, typ, id)
	return nil
}

func TestTamperedExitCodeIsReported(t *testing.T) {
	f := tamper(t, "exit-codes.fixture", "three", proto.TypeExit, func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"exitCode":3`), []byte(`"exitCode":4`), 1)
	})
	rep, err := Run(f, opts())
	require.NoError(t, err)
	require.False(t, rep.OK(), "an edited exit code must fail the replay")
	require.Len(t, rep.Mismatches, 1, rep.String())
	assert.Contains(t, rep.Mismatches[0], `terminal "three": control frame 2: want EXIT {"exitCode":4}, got EXIT {"exitCode":3}`)
}

func TestTamperedOutputIsReported(t *testing.T) {
	f := tamper(t, "echo-round-trip.fixture", "echo", proto.TypeOutput, func(b []byte) []byte {
		return bytes.Replace(b, []byte("hello"), []byte("HELLO"), 1)
	})
	rep, err := Run(f, opts())
	require.NoError(t, err)
	require.False(t, rep.OK())
	assert.Contains(t, rep.String(), `terminal "echo": output differs at byte 0`)
}

func TestTamperedErrorMessageIsReported(t *testing.T) {
	f := tamper(t, "duplicate-id.fixture", "dup", proto.TypeError, func(b []byte) []byte {
		return bytes.Replace(b, []byte("already exists"), []byte("is taken"), 1)
	})
	rep, err := Run(f, opts())
	require.NoError(t, err)
	require.False(t, rep.OK())
	assert.Contains(t, rep.String(), `want ERROR {"message":"terminal id is taken"}`)
}

// A recording that expects a frame the sidecar never sends fails by the
// step deadline instead of hanging.
func TestMissingFrameTimesOut(t *testing.T) {
	recs, err := record.ReadFile(filepath.Join(fixtures, "echo-round-trip.fixture"))
	require.NoError(t, err)
	// Claim the sidecar answered before the host's first frame.
	extra := record.Record{Kind: record.FromSidecar, Raw: proto.AppendFrame(nil, proto.TypeOpened, []byte(`{"terminalId":"ghost","pid":1}`))}
	extra.Frame = proto.Frame{Type: proto.TypeOpened, Body: extra.Raw[proto.HeaderSize:]}
	f, err := Prepare("ghost", append([]record.Record{extra}, recs...))
	require.NoError(t, err)
	o := opts()
	o.StepTimeout = 300 * time.Millisecond
	rep, err := Run(f, o)
	require.NoError(t, err)
	require.False(t, rep.OK())
	assert.Contains(t, rep.Mismatches[0], `before host step 1`)
	assert.Contains(t, rep.Mismatches[0], `terminal "ghost" has 0 of 1 control frames`)
}

// The recorder sees exactly the bytes that went over stdin and stdout.
func TestRecordingIsFaithful(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.fixture")
	cmd := exec.Command(sidecarBin, "--record", path)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	var sent []byte
	sent = proto.AppendFrame(sent, proto.TypeOpen, proto.Marshal(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "echo", Args: []string{"recorded"}}))
	sent = proto.AppendFrame(sent, proto.TypeOpen, proto.Marshal(proto.Open{TerminalID: "b", Cols: 80, Rows: 24, Cmd: "sleep", Args: []string{"60"}}))
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	_, err = in.Write(sent)
	require.NoError(t, err)
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait())

	recs, err := record.ReadFile(path)
	require.NoError(t, err)
	var fromHost, fromSidecar []byte
	var last time.Duration
	eof := 0
	for _, r := range recs {
		assert.GreaterOrEqual(t, r.At, last, "timestamps never go back")
		last = r.At
		switch r.Kind {
		case record.FromHost:
			fromHost = append(fromHost, r.Raw...)
		case record.FromSidecar:
			fromSidecar = append(fromSidecar, r.Raw...)
		case record.HostEOF:
			eof++
		}
	}
	assert.Equal(t, sent, fromHost)
	assert.Equal(t, stdout.Bytes(), fromSidecar)
	assert.Equal(t, 1, eof)
}

// A record file that cannot be written costs the recording, not the session.
func TestUnwritableRecordKeepsServing(t *testing.T) {
	var stderr bytes.Buffer
	s, err := Start(sidecarBin, &stderr, "--record", "/dev/full")
	require.NoError(t, err)
	require.NoError(t, s.SendJSON(proto.TypeOpen, proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "echo", Args: []string{"fine"}}))
	require.True(t, s.Until(10*time.Second, func(v View) bool { return v.Term("a").Count(proto.TypeExit) == 1 }))
	require.NoError(t, s.Finish(10*time.Second))
	assert.Contains(t, stderr.String(), "not recording")
	s.mu.Lock()
	assert.Equal(t, "fine\r\n", string(s.terms["a"].Output))
	s.mu.Unlock()
}
