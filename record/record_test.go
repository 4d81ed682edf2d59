package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
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

// shortFile takes room bytes, the last write partly, then fails as a
// full disk does; it can be truncated, as a file can.
type shortFile struct {
	buf      []byte
	room     int
	truncErr error
}

func (f *shortFile) Write(p []byte) (int, error) {
	n := min(len(p), f.room-len(f.buf))
	f.buf = append(f.buf, p[:n]...)
	if n < len(p) {
		return n, errors.New("no space left on device")
	}
	return n, nil
}

func (f *shortFile) Truncate(size int64) error {
	if f.truncErr != nil {
		return f.truncErr
	}
	f.buf = f.buf[:size]
	return nil
}

// A failed write leaves the output cut back to its last whole record, and
// the error says how many that is; a fixture that ended inside a record
// was refused whole, as a killed sidecar's.
func TestWriteErrorLeavesWholeRecords(t *testing.T) {
	for _, room := range []int{len(Magic) + 100, 5000, 70 << 10, 200 << 10} {
		t.Run(fmt.Sprint(room), func(t *testing.T) {
			f := &shortFile{room: room}
			w, err := NewWriter(f)
			require.NoError(t, err)
			var reported error
			w.OnError = func(err error) { reported = err }
			for i := 0; w.Err() == nil; i++ {
				// Output (buffered) of several sizes, a control frame
				// (flushed) now and then.
				w.Tap(false, proto.AppendDataFrame(nil, proto.TypeOutput, "a", bytes.Repeat([]byte{'x'}, 1+i*397%9000)))
				if i%7 == 0 {
					w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "a"}))
				}
			}
			w.Close()
			require.Error(t, reported)
			m := regexp.MustCompile(`^recording stopped: no space left on device; the recording holds (\d+) whole records( \(the \d+ bytes of the next one that were written are cut off\))?$`).FindStringSubmatch(reported.Error())
			require.NotNil(t, m, reported.Error())
			recs, err := ReadAll(bytes.NewReader(f.buf))
			require.NoError(t, err, "the output reads to its end")
			assert.Equal(t, m[1], fmt.Sprint(len(recs)))
		})
	}
}

// When the rest cannot be cut off, the error says so, and what the output
// holds.
func TestWriteErrorThatCannotBeCutBack(t *testing.T) {
	f := &shortFile{room: len(Magic) + 30, truncErr: errors.New("read-only file system")}
	w, err := NewWriter(f)
	require.NoError(t, err)
	w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "a"})) // a record of 36 bytes, 30 of them written
	w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "b"}))
	assert.EqualError(t, w.Err(), "recording stopped: no space left on device; the recording holds 0 whole records, then 30 bytes of the next one: cutting those off failed too: read-only file system")

	// An output that is no file cannot be cut back at all.
	out := &failAfter{n: 1}
	w, err = NewWriter(out)
	require.NoError(t, err)
	w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: "a"}))
	assert.EqualError(t, w.Err(), "recording stopped: disk full; the recording holds 0 whole records")
}

// A file that ends inside a record is reported as cut short, with the
// records before it, which are whole.
func TestReaderReturnsWholeRecordsBeforeATruncation(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	require.NoError(t, err)
	for _, id := range []string{"a", "b", "c"} {
		w.Frame(FromHost, proto.TypeClose, proto.Marshal(proto.Close{TerminalID: id}))
	}
	require.NoError(t, w.Close())
	whole := buf.Bytes()
	for _, cut := range []int{3, recordHeader + 1} {
		recs, err := ReadAll(bytes.NewReader(whole[:len(whole)-cut]))
		assert.ErrorIs(t, err, ErrTruncated)
		assert.ErrorIs(t, err, ErrFormat)
		assert.ErrorContains(t, err, "record 2: truncated")
		assert.Len(t, recs, 2)
	}
	_, err = ReadAll(bytes.NewReader([]byte(Magic + "H\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff")))
	assert.NotErrorIs(t, err, ErrTruncated, "an impossible length is damage, not a cut")
}
