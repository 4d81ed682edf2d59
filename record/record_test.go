package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/proto"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	require.NoError(t, err)
	open := proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "cat"}))
	w.Tap(true, open)
	w.Tap(false, proto.AppendDataFrame(nil, proto.TypeOutput, "a", []byte("hi")))
	w.Annotate(Annotation{TerminalID: "a", Output: OutputIgnore})
	w.HostEOF()
	require.NoError(t, w.Close())

	recs, err := ReadAll(&buf)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	assert.Equal(t, FromHost, recs[0].Kind)
	assert.Equal(t, proto.TypeOpen, recs[0].Frame.Type)
	assert.Equal(t, open, recs[0].Raw)
	assert.Equal(t, FromSidecar, recs[1].Kind)
	id, data, err := proto.ParseData(recs[1].Frame.Body)
	require.NoError(t, err)
	assert.Equal(t, "a", id)
	assert.Equal(t, "hi", string(data))
	assert.Equal(t, Note, recs[2].Kind)
	assert.JSONEq(t, `{"terminalId":"a","output":"ignore"}`, string(recs[2].Raw))
	assert.Equal(t, HostEOF, recs[3].Kind)
	for i := 1; i < len(recs); i++ {
		assert.GreaterOrEqual(t, recs[i].At, recs[i-1].At, "timestamps are monotonic")
	}
}

func TestConcurrentTaps(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame := proto.AppendDataFrame(nil, proto.TypeOutput, fmt.Sprint("t", g), []byte("xyz"))
			for i := 0; i < 200; i++ {
				w.Tap(g%2 == 0, frame)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, w.Close())
	recs, err := ReadAll(&buf)
	require.NoError(t, err)
	assert.Len(t, recs, 1600)
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestWriteErrorStopsRecording(t *testing.T) {
	out := &failAfter{n: 1} // the header gets through, the first record does not
	w, err := NewWriter(out)
	require.NoError(t, err)
	var reported []error
	w.OnError = func(err error) { reported = append(reported, err) }
	w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "a"}))
	w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "b"}))
	require.Len(t, reported, 1, "the error is reported once")
	assert.ErrorContains(t, w.Err(), "disk full")
	assert.ErrorContains(t, w.Close(), "disk full")
}

func TestReaderRejectsDamage(t *testing.T) {
	_, err := NewReader(bytes.NewReader([]byte("not a fixture\n")))
	assert.ErrorIs(t, err, ErrFormat)

	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	require.NoError(t, err)
	w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "a"}))
	require.NoError(t, w.Close())
	whole := buf.Bytes()
	_, err = ReadAll(bytes.NewReader(whole[:len(whole)-3]))
	assert.ErrorIs(t, err, ErrFormat)

	rd, err := NewReader(bytes.NewReader(whole))
	require.NoError(t, err)
	_, err = rd.Next()
	require.NoError(t, err)
	_, err = rd.Next()
	assert.Equal(t, io.EOF, err)
}

func TestWatchEOF(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	require.NoError(t, err)
	got, err := io.ReadAll(w.WatchEOF(bytes.NewReader([]byte("abc"))))
	require.NoError(t, err)
	assert.Equal(t, "abc", string(got))
	require.NoError(t, w.Close())
	recs, err := ReadAll(&buf)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, HostEOF, recs[0].Kind)
}
